"""The harness's own check: exit codes decide, output stays bounded, nothing is left running."""

from __future__ import annotations

from pathlib import Path

from orchestrator.run.checks.running.check_command import run_check
from tests.environments import unsandboxed


def test_no_command_is_skipped(tmp_path: Path) -> None:
    for command in (None, "", "   "):
        result = run_check(command, unsandboxed(tmp_path), attempt=1)
        assert result.skipped is True
        assert result.success is False
        assert result.exit_code is None
        assert result.error == "no check command"


