"""What the Agent SDK is given for one attempt: `ClaudeAgentOptions`, built in one place.

A fresh session each attempt (never `--continue` or `--resume`: what the agent knows of the
project is what this program injects); Claude Code's own system prompt with the run's rules and
project appended; no settings files of the tree (`--claude-settings project`: as they were when
the run began, `project_config`); the user's MCP servers
only from `--mcp-config`, beside the in-process `report_feature`; permissions that let it act
unattended, with the write guard deciding before every tool call.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from claude_agent_sdk import (
    AgentDefinition,
    ClaudeAgentOptions,
    McpSdkServerConfig,
    SettingSource,
    ThinkingConfig,
    ThinkingConfigAdaptive,
    ThinkingConfigDisabled,
    ThinkingConfigEnabled,
)

from orchestrator.claude_code.guards.sandbox_view import sandbox_view
from orchestrator.claude_code.guards.write_guard import unattended, write_guard
from orchestrator.claude_code.session.project_config import ProjectConfig
from orchestrator.claude_code.session.report_server import SERVER_NAME
from orchestrator.json_types import JsonObject
from orchestrator.tools.context import ToolContext

# Claude Code tools an unattended attempt must not have: no one answers a question, the job owns
# the worktrees, nothing may outlive the attempt, plan mode would stop it acting, and a web
# search runs on Anthropic's side, past the sandbox's list of allowed hosts.
WITHHELD_TOOLS = ["AskUserQuestion", "EnterWorktree", "ExitWorktree", "CronCreate", "CronDelete", "CronList",
                  "ScheduleWakeup", "EnterPlanMode", "WebSearch"]


@dataclass(frozen=True)
class SessionSettings:
    """The run's choices for every Claude Code session."""

    model: str
    max_turns: int
    system_append: str  # the project and its rules, after Claude Code's own system prompt
    claude_settings: str  # "none" | "project" (what `project` holds is decided by the agent's allowed kinds)
    mcp_config: Path | None
    project: ProjectConfig | None = None  # the allowed kinds, as the run began, never from the live tree
    thinking: ThinkingConfig = field(default_factory=lambda: ThinkingConfigDisabled(type="disabled"))  # the run's


def sdk_thinking(thinking: Mapping[str, object] | None) -> ThinkingConfig:
    """The run's thinking for an attempt (its requests' `thinking` field, None when off) as Claude Code
    takes it: off is said outright, or Claude Code would think with a budget of its own choosing."""
    kind = (thinking or {}).get("type")
    budget = (thinking or {}).get("budget_tokens")
    if kind == "enabled" and isinstance(budget, int):
        return ThinkingConfigEnabled(type="enabled", budget_tokens=budget)
    if kind == "adaptive":
        return ThinkingConfigAdaptive(type="adaptive")
    return ThinkingConfigDisabled(type="disabled")


def session_options(
    settings: SessionSettings, tools: ToolContext, report: McpSdkServerConfig, cli_path: Path, env: dict[str, str],
) -> ClaudeAgentOptions:
    """The options of one attempt's session in `tools.environment`'s workspace (`env`: the CLI's variables)."""
    # Where the CLI's sign-in is, out of its file tools' reach (without HOME in `env` the SDK gives it ours).
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    view = sandbox_view(tools.environment, env)  # where the CLI resolves the paths its tools are given
    # No source of the CLI's own: it would read the tree the agent writes (hooks, env, CLAUDE.md).
    sources: list[SettingSource] = []
    project = settings.project
    # The project's servers (allowed, as the run began), then the user's, then ours, which wins.
    servers: dict[str, object] = {**(project.mcp_servers if project else {}), **_user_servers(settings.mcp_config)}
    servers[SERVER_NAME] = report  # ours wins over a user's server of the same name
    return ClaudeAgentOptions(
        cwd=str(tools.environment.workspace),
        model=settings.model,
        max_turns=settings.max_turns,
        system_prompt={"type": "preset", "preset": "claude_code",
                       "append": settings.system_append + (project.system_addition() if project else "")},
        settings=project.settings_json() if project else None,
        agents=_agent_definitions(project.agents) if project and project.agents else None,
        setting_sources=sources,
        mcp_servers=servers,  # type: ignore[arg-type]  # the user's file is JSON, checked by the CLI
        strict_mcp_config=True,  # no .mcp.json of a cloned repository, no user-level servers
        # Unattended: what would prompt a user is answered by `unattended` (not bypassPermissions,
        # which the CLI refuses to root); the hook denies writes to protected paths before that.
        permission_mode="acceptEdits",
        can_use_tool=unattended(tools, home, view),
        hooks={"PreToolUse": [write_guard(tools, home, view)]},
        disallowed_tools=list(WITHHELD_TOOLS),
        continue_conversation=False,
        resume=None,
        cli_path=str(cli_path),
        env=env,
        thinking=settings.thinking,  # the run's --thinking (off: none), not Claude Code's own default budget
        verbatim_prompts=True,  # the prompt holds text of the spec and of earlier agents: no @file expansion
    )


def _agent_definitions(agents: Mapping[str, JsonObject]) -> dict[str, AgentDefinition]:
    """The project's agent definitions (`project_config`), as the SDK takes them."""
    made = {}
    for name, fields in agents.items():
        tools = fields.get("tools")
        model = fields.get("model")
        made[name] = AgentDefinition(
            description=str(fields.get("description", "")), prompt=str(fields.get("prompt", "")),
            tools=[str(tool) for tool in tools] if isinstance(tools, list) else None,
            model=str(model) if isinstance(model, str) else None,
        )
    return made


def _user_servers(path: Path | None) -> dict[str, object]:
    """The `mcpServers` of the user's `--mcp-config` file; a file that cannot serve is a `ValueError`."""
    if path is None:
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"--mcp-config {path}: cannot be read as JSON: {err}") from err
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise ValueError(f'--mcp-config {path}: needs an object "mcpServers" naming each server')
    return dict(servers)
