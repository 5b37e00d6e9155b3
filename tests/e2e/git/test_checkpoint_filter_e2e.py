"""No commit orchestrate makes holds the run's own files, whatever `.gitignore` says: an agent
that un-ignores `.autonomous/` and writes there cannot reach the user's state through a merge,
a checkpoint or the "project as it was before the run" commit (issue 28, break 1)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fake_messages_api.scripted_agent.plans import bash, edit_create, report, text
from tests.cli_helpers import run_cli, write_spec
from tests.e2e.safety.test_sandbox import bwrap_problem
from tests.git_helpers import init_repo

# The agent command, past the shell policy's spelling: un-ignore the state directory
# and forge a feature log (and, for a serial run, a `--fresh` backup) in it.
FORGE = (
    "d=.auto; d=${d}nomous; printf '!%s/\\n!%s.bak-*/\\n' $d $d >> .gitignore; "
    "mkdir -p $d/logs $d.bak-1/state; echo '{\"FORGED\":1}' > $d/logs/forged.json; "
    "echo '{\"FORGED\":1}' > $d.bak-1/state/execution-state.json"
)
SANDBOXES = [
    "none",
    pytest.param("bwrap", marks=pytest.mark.skipif(bwrap_problem() is not None, reason=f"{bwrap_problem()}")),
]


def _forging_plan(turn: Any) -> list[Any]:
    steps = [[bash(FORGE), edit_create(f"features/{turn.feature_id}.txt", "done\n")], [report("done")]]
    return steps[turn.step] if turn.step < len(steps) else [text("ok")]


def _committed_paths(root: Path) -> set[str]:
    """Every path any commit on the checked-out branch added, changed or deleted."""
    listed = subprocess.run(["git", "log", "--format=", "--name-only", "HEAD"], cwd=root, capture_output=True,
                            text=True, check=True).stdout
    return {line for line in listed.splitlines() if line}


def _ours(paths: set[str]) -> list[str]:
    return sorted(p for p in paths if p.split("/", 1)[0] == ".autonomous" or p.startswith(".autonomous.bak-"))


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_an_agent_that_unignores_the_state_cannot_write_it_through_a_merge(
    fake_api: Any, tmp_path: Path, sandbox: str
) -> None:
    project = init_repo(tmp_path / "project")
    spec = write_spec(tmp_path, 2)
    fake_api.plans["feat-01"] = _forging_plan

    result = run_cli(["run", str(spec), "--jobs", "2", "--sandbox", sandbox, "--json"], project, fake_api)

    assert result.code == 0, result.stderr
    assert _ours(_committed_paths(project)) == []
    assert not (project / ".autonomous/logs/forged.json").exists()
    assert not (project / ".autonomous.bak-1").exists()
    assert "!.autonomous/" in (project / ".gitignore").read_text()  # the agent's change itself is its work


def test_the_start_of_run_commit_never_holds_the_runs_own_files(fake_api: Any, tmp_path: Path) -> None:
    # A `.gitignore` that lets the state through (as a merged feature's may): the uncommitted
    # changes `--jobs` commits first must not take the run's journal, events, lock or worktrees.
    project = init_repo(tmp_path / "project", {".gitignore": "!.autonomous/\n", "README.md": "widget\n"})
    (project / "README.md").write_text("widget, edited\n")
    spec = write_spec(tmp_path, 2)

    result = run_cli(["run", str(spec), "--jobs", "2", "--json"], project, fake_api)

    assert result.code == 0, result.stderr
    assert _ours(_committed_paths(project)) == []
    subjects = subprocess.run(["git", "log", "--format=%s"], cwd=project, capture_output=True, text=True,
                              check=True).stdout.splitlines()
    assert "orchestrate: the project as it was before the run" in subjects
    state = json.loads((project / ".autonomous/state/execution-state.json").read_text())
    assert {fid: entry["status"] for fid, entry in state["features"].items()} == {
        "feat-01": "passed", "feat-02": "passed"
    }


def test_a_serial_checkpoint_never_holds_the_state_or_a_backup_whatever_gitignore_says(
    fake_api: Any, tmp_path: Path
) -> None:
    project = init_repo(tmp_path / "project")
    spec = write_spec(tmp_path, 2)
    fake_api.plans["feat-01"] = _forging_plan

    result = run_cli(["run", str(spec), "--json"], project, fake_api)

    assert result.code == 0, result.stderr
    assert _ours(_committed_paths(project)) == []
    staged = subprocess.run(["git", "diff", "--cached", "--name-only"], cwd=project, capture_output=True, text=True,
                            check=True).stdout
    assert _ours(set(staged.split())) == []  # nor left staged for the user's next commit
