"""The settings that choose the coding agent and what of the user's Claude Code setup it sees.

`RunConfig` (`orchestrator.config`) takes these fields over, so they come from flags,
`ORCHESTRATE_*`, `orchestrate.toml` and defaults like every other setting.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, field_validator, model_validator

AgentName = Literal["builtin", "claude-code"]
ClaudeSettings = Literal["none", "project"]
# The kinds of the project's own Claude Code configuration a run may load, as they were before it began.
ClaudeCodeKind = Literal["settings", "claude-md", "agents", "mcp"]
CLAUDE_CODE_KINDS: tuple[ClaudeCodeKind, ...] = ("settings", "claude-md", "agents", "mcp")
# What is never loaded, whoever asks: each runs a program or changes the CLI's environment.
NEVER_ALLOWED = ("hooks", "env")
DEFAULT_PLAN_ATTEMPT_BUDGET = 5.0  # USD: a plan attempt killed without a report is booked at this


class AgentSettings(BaseModel):
    """Which agent works on each attempt, and (for Claude Code) what it may read of the user's setup."""

    agent: AgentName = Field(
        "builtin", description="The coding agent: builtin (this program's loop) or claude-code (the Agent SDK)."
    )
    mcp_config: Path | None = Field(None, description="Claude Code only: an MCP config file whose servers it gets.")
    claude_settings: ClaudeSettings = Field(
        "none", description="Claude Code only: none, or project (read the project's CLAUDE.md and .claude/settings.json)."
    )
    claude_code_allow: list[ClaudeCodeKind] = Field(
        default_factory=list,
        description="Claude Code only: kinds of the project's Claude Code configuration to load, as they were when "
        "the run began (never what an agent wrote during it): settings (.claude/settings.json without hooks and "
        "env), claude-md (CLAUDE.md), agents (.claude/agents/*.md), mcp (.mcp.json); comma-separated from a flag. "
        "hooks and env are never loaded.",
    )
    plan_attempt_budget: float = Field(
        DEFAULT_PLAN_ATTEMPT_BUDGET, gt=0,
        description="Claude Code on a Claude plan: USD budget of each attempt (--max-cost's share wins when smaller).",
    )

    @field_validator("claude_code_allow", mode="before")
    @classmethod
    def _named_kinds(cls, value: object) -> object:
        names = [part.strip() for part in value.split(",") if part.strip()] if isinstance(value, str) else value
        if isinstance(names, list):
            for name in names:
                if name in NEVER_ALLOWED:
                    raise ValueError(f"{name!r} is never loaded: hooks and env run programs or change Claude Code's "
                                     f"environment, so no setting allows them; allow only {', '.join(CLAUDE_CODE_KINDS)}")
                if name not in CLAUDE_CODE_KINDS:
                    raise ValueError(f"unknown kind {name!r}: choose from {', '.join(CLAUDE_CODE_KINDS)}")
        return names

    def claude_code_kinds(self) -> frozenset[ClaudeCodeKind]:
        """The kinds loaded: those allowed, and settings and CLAUDE.md under `claude_settings = "project"`."""
        project: tuple[ClaudeCodeKind, ...] = ("settings", "claude-md") if self.claude_settings == "project" else ()
        return frozenset((*self.claude_code_allow, *project))

    @model_validator(mode="after")
    def _fresh_sessions_need_no_replay(self) -> AgentSettings:
        # Each Claude Code attempt is a fresh session: earlier messages cannot be replayed into it.
        if self.agent == "claude-code" and getattr(self, "context", None) == "replay":
            raise ValueError("agent claude-code: --context replay needs the built-in agent; use compressed or window")
        return self
