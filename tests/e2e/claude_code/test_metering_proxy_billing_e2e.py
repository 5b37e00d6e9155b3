"""`doctor` and `run` say which way Claude Code is paid for, before any call."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_helpers import run_cli, write_spec

pytest.importorskip("claude_agent_sdk", reason="the claude-code extra is not installed")


def _billing_line(stdout: str) -> str:
    return next(line for line in stdout.splitlines() if line.startswith("billing"))


def test_doctor_says_a_key_is_metered_per_call_and_a_plan_is_capped_per_attempt(tmp_path: Path) -> None:
    keyed = run_cli(["doctor", "--agent", "claude-code"], tmp_path, ORCHESTRATE_SANDBOX="none", ORCHESTRATE_MAX_COST="2")
    assert "API key, metered by orchestrate: --max-cost $2.00, checked before every call" in _billing_line(keyed.stdout)
    plan = run_cli(["doctor", "--agent", "claude-code"], tmp_path, key=None, ORCHESTRATE_SANDBOX="none")
    line = _billing_line(plan.stdout)
    assert plan.code == 0, plan.stdout  # no key is needed on a plan
    assert "your Claude plan" in line and "enforced per attempt, not per call" in line
    builtin = run_cli(["doctor"], tmp_path, ORCHESTRATE_SANDBOX="none")
    assert not any(line.startswith("billing") for line in builtin.stdout.splitlines())


def test_claude_code_with_its_own_cloud_switch_is_told_to_name_the_provider(tmp_path: Path, fake_api) -> None:
    spec = write_spec(tmp_path, 1)
    result = run_cli(["run", str(spec), "--agent", "claude-code"], tmp_path, fake_api,
                     ORCHESTRATE_SANDBOX="none", CLAUDE_CODE_USE_BEDROCK="1")
    assert result.code == 2, result.stdout + result.stderr
    assert "CLAUDE_CODE_USE_BEDROCK is set: run with --provider bedrock" in result.stderr
    assert fake_api.calls == 0


def test_a_run_on_a_claude_plan_starts_without_a_key_says_so_and_leaves_sign_in_to_claude_code(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, 1)
    result = run_cli(["run", str(spec), "--agent", "claude-code", "--max-cost", "1", "--max-attempts", "1",
                      "--no-commit"], tmp_path, key=None, ORCHESTRATE_SANDBOX="none")
    assert "no API key" not in result.stderr
    assert "billing: your Claude plan" in result.stdout and "enforced per attempt, not per call" in result.stdout
    assert "Not logged in" in result.stderr  # Claude Code's own sign-in is asked for: none was given to it
    assert "summarizer" in result.stderr  # the Context Agent folds its summary without a model of ours
