"""The settings that choose the coding agent and what of the user's Claude Code setup it sees.

`RunConfig` (`orchestrator.config`) takes these fields over, so they come from flags,
`ORCHESTRATE_*`, `orchestrate.toml` and defaults like every other setting.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, model_validator

AgentName = Literal["builtin", "claude-code"]
ClaudeSettings = Literal["none", "project"]
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
    plan_attempt_budget: float = Field(
        DEFAULT_PLAN_ATTEMPT_BUDGET, gt=0,
        description="Claude Code on a Claude plan: USD budget of each attempt (--max-cost's share wins when smaller).",
    )

    @model_validator(mode="after")
    def _fresh_sessions_need_no_replay(self) -> AgentSettings:
        # Each Claude Code attempt is a fresh session: earlier messages cannot be replayed into it.
        if self.agent == "claude-code" and getattr(self, "context", None) == "replay":
            raise ValueError("agent claude-code: --context replay needs the built-in agent; use compressed or window")
        return self
