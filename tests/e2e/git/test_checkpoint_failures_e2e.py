"""Free text that reaches git is bounded at validation, and a checkpoint that fails is said as
it is and never leaves a feature counted passed (issue 28, break 12)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from orchestrator.git.checkpoint import commit_checkpoint
from orchestrator.git.run_git import CheckpointError, run_git
from tests.cli_helpers import read_json, run_cli, write_spec
from tests.git_helpers import git, init_repo


def test_a_huge_feature_name_is_refused_before_anything_runs(fake_api: Any, tmp_path: Path) -> None:
    project = init_repo(tmp_path / "project")
    spec = write_spec(tmp_path, 1, extra={"feat-01": {"name": "n" * 300_000}})

    result = run_cli(["run", str(spec)], project, fake_api)

    assert result.code == 2, result.stderr
    assert "features[0].name: is 300000 characters long; the limit is 200" in result.stderr
    assert fake_api.requests == []
    assert not (project / ".autonomous/state/execution-state.json").exists()


def test_a_feature_whose_checkpoint_fails_is_not_counted_passed(fake_api: Any, tmp_path: Path) -> None:
    project = init_repo(tmp_path / "project")
    # A repository setting checkpoints refuse to run under (it cannot be overridden with -c).
    git(project, "config", "filter.a=b.clean", "cat")
    spec = write_spec(tmp_path, 1)

    result = run_cli(["run", str(spec), "--json"], project, fake_api)

    assert result.code == 1, result.stderr
    entry = read_json(project / ".autonomous/state/execution-state.json")["features"]["feat-01"]
    assert entry["status"] == "failed"
    assert "checkpoint commit failed" in entry["reason"] and "cannot switch off" in entry["reason"]
    warnings = [e["message"] for e in result.events() if e["type"] == "warning"]
    assert any("feat-01 is not counted passed" in message for message in warnings)
    assert not any("not installed" in message for message in warnings)
    finished = [e for e in result.events() if e["type"] == "feature_finished"]
    assert [(e["id"], e["status"]) for e in finished] == [("feat-01", "failed")]
    assert read_json(project / ".autonomous/logs/feat-01.json")["status"] == "failed"
    assert (project / "features/feat-01.txt").exists()  # the work stays in the tree


def test_an_argument_list_too_long_is_not_reported_as_a_missing_git(tmp_path: Path) -> None:
    init_repo(tmp_path)
    with pytest.raises(CheckpointError) as caught:
        run_git(tmp_path, "log", "x" * 300_000)
    assert "not installed" not in str(caught.value)


def test_a_long_checkpoint_message_is_committed_whole(tmp_path: Path) -> None:
    init_repo(tmp_path)
    (tmp_path / "a.txt").write_text("a\n")
    message = "orchestrate: f: " + "n" * 300_000
    sha = commit_checkpoint(tmp_path, message)
    body = subprocess.run(["git", "log", "-1", "--format=%B", str(sha)], cwd=tmp_path, capture_output=True, text=True,
                          check=True).stdout
    assert body.strip() == message
