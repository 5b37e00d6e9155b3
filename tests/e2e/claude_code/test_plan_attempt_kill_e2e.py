"""On a Claude plan without `--max-cost`, a kill -9 mid-attempt still leaves the attempt booked,
at its budget (`plan_attempt_budget`, $5 by default), and `orchestrate status` shows it.

A plan run cannot reach the packaged fake through `orchestrate run` (the run hands the CLI no
ANTHROPIC_* variable and the CLI goes to Anthropic with the user's sign-in), so the attempt is
opened at the level `ClaudeCodeAgent` opens it: `PlanAttempt` on the run's books, in a process
that is then killed with SIGKILL while the attempt runs. `status` is the real CLI.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.agent_settings import DEFAULT_PLAN_ATTEMPT_BUDGET
from tests.cli_helpers import cli_env, orchestrate_command

# The attempt as the agent opens it on a plan with no --max-cost: the run's books, the default budget.
ATTEMPT = """
import sys, time
from pathlib import Path
from orchestrator.claude_code.billing import PlanAttempt
from orchestrator.config import RunConfig
from orchestrator.llm.client import ModelClient
from orchestrator.llm.spend import Spend
from orchestrator.store.paths import ProjectPaths
from orchestrator.store.state import StateStore
store = StateStore(ProjectPaths.for_project(Path(sys.argv[1])))
books = ModelClient(RunConfig().client_settings(), None, Spend(feature_id="feat-01"), journal=store.record_spend)
with PlanAttempt(books, model="claude-opus-5-5", feature_id="feat-01", attempt=1, on_event=lambda _e: None):
    print("running", flush=True)  # Claude Code would be spending now
    time.sleep(600)
"""


def _killed_mid_attempt(project: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", ATTEMPT, str(project)], stdout=subprocess.PIPE, text=True,
                            env=cli_env(None, key=None))
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "running", "the attempt never started"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL


def _status(project: Path, *flags: str) -> str:
    done = subprocess.run(orchestrate_command("status", *flags), cwd=project, env=cli_env(None, key=None),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_plan_attempt_killed_without_max_cost_is_booked_at_its_budget_and_status_shows_it(tmp_path: Path) -> None:
    _killed_mid_attempt(tmp_path)
    state = json.loads(_status(tmp_path, "--json"))
    assert state["features"]["feat-01"]["costUsd"] == pytest.approx(DEFAULT_PLAN_ATTEMPT_BUDGET)
    assert f"${DEFAULT_PLAN_ATTEMPT_BUDGET:.4f}" in _status(tmp_path)  # the table's total: $5.0000
