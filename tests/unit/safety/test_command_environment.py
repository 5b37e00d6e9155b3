"""One environment for every command the model causes, required wherever a command is run.

No runner of commands can be built without a `CommandEnvironment`: no parameter defaults to
one (or to "no sandbox"), so a new mode that forgets to pass it fails to type-check and to
run, instead of running the model's commands unsandboxed.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Any

import pytest

from orchestrator.combine.final_check import CheckSettings as CombineCheckSettings
from orchestrator.plan.check_writer import CheckWriterSettings as PlanCheckSettings
from orchestrator.plan.red import red_check
from orchestrator.run.attempt.feature_job import JobSettings
from orchestrator.run.checks.running.check_command import CheckVerifier, run_check
from orchestrator.run.checks.running.check_pool import check_runner
from orchestrator.run.runner import RunParts
from orchestrator.safety.bubblewrap.sandbox import NO_SANDBOX, Sandbox
from orchestrator.safety.environment import CommandEnvironment
from orchestrator.safety.processes.process_group import run_in_group
from orchestrator.tools.context import ToolContext

REPO_ROOT = Path(__file__).resolve().parents[3]

# Every way a command the model causes is run, and the parameter that says where.
RUNNERS: list[tuple[Any, str]] = [
    (run_in_group, "environment"), (run_check, "environment"), (check_runner, "environment"),
    (CheckVerifier, "environment"), (ToolContext, "environment"), (JobSettings, "environment"),
    (RunParts, "environment"), (CombineCheckSettings, "environment"), (PlanCheckSettings, "environment"),
    (red_check, "environment"),
]


@pytest.mark.parametrize(("runner", "name"), RUNNERS, ids=[r.__module__.rsplit(".", 1)[-1] + "." + r.__qualname__ for r, _ in RUNNERS])
def test_every_runner_of_commands_requires_an_environment(runner: Any, name: str) -> None:
    parameter = inspect.signature(runner).parameters[name]
    assert parameter.default is inspect.Parameter.empty, f"{runner.__qualname__}({name}=...) has a default"


def test_no_parameter_anywhere_defaults_to_a_sandbox_or_an_environment() -> None:
    default = re.compile(r":\s*(?:Sandbox|CommandEnvironment)(?:\s*\|\s*None)?\s*=|=\s*NO_SANDBOX\b")
    offenders = [
        f"{path.relative_to(REPO_ROOT)}:{number}"
        for path in sorted((REPO_ROOT / "orchestrator").rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if default.search(line)
    ]
    assert offenders == []


def test_moving_to_another_workspace_keeps_the_sandbox_and_the_variables(tmp_path: Path) -> None:
    sandbox = Sandbox("bwrap", "test", bwrap="/usr/bin/bwrap")
    environment = CommandEnvironment(tmp_path, sandbox, {"PATH": "/usr/bin"})
    moved = environment.at(tmp_path / "worktree")
    assert (moved.workspace, moved.sandbox, moved.variables) == (tmp_path / "worktree", sandbox, {"PATH": "/usr/bin"})
    # bwrap runs it (behind the /bin/sh that opens the Unix-socket filter for `bwrap --seccomp`).
    assert "/usr/bin/bwrap" in moved.argv("true") and str(tmp_path / "worktree") in moved.argv("true")


def test_the_protected_paths_are_the_state_git_and_the_runs_configuration(tmp_path: Path) -> None:
    environment = CommandEnvironment(tmp_path, NO_SANDBOX, {})
    assert environment.protected == (tmp_path / ".autonomous", tmp_path / ".git", tmp_path / "orchestrate.toml")
