"""The agent a run's settings ask for (`--agent`), checked before the run starts.

Only `claude-code` needs anything: the Agent SDK (the optional extra, exit 2 with the command
that installs it), its CLI, and a readable `--mcp-config`. Nothing of the SDK is imported for
the built-in agent.
"""

from __future__ import annotations

from orchestrator.claude_code.availability import INSTALL, bundled_cli, require_sdk
from orchestrator.claude_code.billing import billing_mode
from orchestrator.config import RunConfig
from orchestrator.run.attempt.agent_seam import BUILTIN_AGENT, Agent
from orchestrator.user_errors import UsageError


def agent_for(config: RunConfig) -> Agent:
    """The run's agent; `UsageError` (exit 2) when `claude-code` cannot run here."""
    if config.agent == "builtin":
        return BUILTIN_AGENT
    require_sdk()
    cli = bundled_cli()
    if cli is None:
        raise UsageError(f"--agent claude-code: the Agent SDK's Claude Code CLI was not found; reinstall it with {INSTALL}")
    if config.mcp_config is not None and not config.mcp_config.is_file():
        raise UsageError(f"--mcp-config {config.mcp_config}: no such file")
    from orchestrator.claude_code.agent import ClaudeCodeAgent

    return ClaudeCodeAgent(
        cli=str(cli), claude_settings=config.claude_settings,
        mcp_config=str(config.mcp_config.resolve()) if config.mcp_config else None,
        billing=billing_mode(config.provider),  # ConfigError (exit 2) for Bedrock or Vertex
        plan_attempt_budget=config.plan_attempt_budget, allow=config.claude_code_kinds(),
    )
