"""The bash tool as the agent calls it, in a project with a state file the tool must not touch
(both halves of `test_tools_bash`)."""

from __future__ import annotations

from pathlib import Path

from orchestrator.tools.context import ToolContext, ToolResult
from orchestrator.tools.dispatch import execute_tool
from tests.environments import unsandboxed


def bash_project(tmp_path: Path) -> Path:
    """`tmp_path/project` holding `.autonomous/state/execution-state.json`."""
    root = tmp_path / "project"
    (root / ".autonomous" / "state").mkdir(parents=True)
    (root / ".autonomous" / "state" / "execution-state.json").write_text('{"ok": true}\n')
    return root.resolve()


def bash_context(project: Path) -> ToolContext:
    return ToolContext(environment=unsandboxed(project), bash_timeout=10)


def bash(ctx: ToolContext, command: str) -> ToolResult:
    return execute_tool("bash", {"command": command}, ctx)
