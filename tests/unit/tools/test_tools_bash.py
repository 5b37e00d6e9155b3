"""The bash tool: runs in the project, without secrets, within its time and output limits."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.tools.context import ToolContext
from orchestrator.tools.dispatch import execute_tool
from orchestrator.tools.shell_policy import ShellPolicy
from tests.bash_tool import bash, bash_context, bash_project
from tests.environments import unsandboxed


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return bash_project(tmp_path)


@pytest.fixture
def ctx(project: Path) -> ToolContext:
    return bash_context(project)


def test_policy_refusals_are_errors_and_nothing_runs(ctx: ToolContext, project: Path) -> None:
    state = project / ".autonomous" / "state" / "execution-state.json"
    for command in [
        "echo '{}' > .autonomous/state/execution-state.json",
        "cat /dev/null > .autonomous/state/execution-state.json",
        "cp /dev/null .autonomous/state/execution-state.json",
        "sed -i 's/true/false/' .autonomous/state/execution-state.json",
        f"echo pwned | tee {state}",
        "git push origin main",
        "rm -rf ~",
    ]:
        result = bash(ctx, command)
        assert result.is_error, command
        assert result.content.startswith("refused by the shell policy:"), result.content
    assert state.read_text() == '{"ok": true}\n'


def test_a_configured_deny_rule_applies(project: Path) -> None:
    ctx = ToolContext(environment=unsandboxed(project), policy=ShellPolicy.default().with_extra([r"\bnpm\s+publish\b"]))
    result = bash(ctx, "npm publish")
    assert result.is_error and "[security] deny" in result.content


def test_bad_input_is_an_error(ctx: ToolContext) -> None:
    for tool_input in [{}, {"command": ""}, {"command": 5}, {"command": "echo \x00"}, {"command": "x" * 200_000}]:
        result = execute_tool("bash", tool_input, ctx)
        assert result.is_error, tool_input


