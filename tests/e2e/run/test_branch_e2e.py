"""`orchestrate run --branch NAME`: checkpoints go to NAME; the checked-out branch and tree stay put."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli, write_spec
from tests.git_helpers import git, init_repo, subjects

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def test_checkpoints_go_to_the_branch_and_the_checkout_is_left_alone(fake_api, tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    spec = write_spec(tmp_path, 2)
    before = git(repo, "rev-parse", "HEAD")

    result = run_cli(["run", str(spec), "--branch", "feature/widgets"], repo, fake_api)

    assert result.code == 0, result.stderr
    assert git(repo, "rev-parse", "HEAD") == before
    assert git(repo, "symbolic-ref", "--short", "HEAD") == "main"
    assert git(repo, "status", "--porcelain") == ""
    assert not (repo / "features").exists()
    assert subjects(repo, "feature/widgets") == [
        "initial", "orchestrate: feat-01: Feature 1", "orchestrate: feat-02: Feature 2",
    ]
    committed = git(repo, "ls-tree", "-r", "--name-only", "feature/widgets").splitlines()
    assert "features/feat-02.txt" in committed
    assert not any(path.startswith(".autonomous") for path in committed)


def test_a_second_run_resumes_the_branch_and_sends_nothing(fake_api, tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    spec = write_spec(tmp_path, 1)
    assert run_cli(["run", str(spec), "--branch", "work"], repo, fake_api).code == 0
    spec = write_spec(tmp_path, 2)
    fake_api.reset()

    again = run_cli(["run", str(spec)], repo, fake_api, ORCHESTRATE_BRANCH="work")

    assert again.code == 0, again.stderr
    assert not fake_api.agent_requests("feat-01")
    assert subjects(repo, "work")[1:] == ["orchestrate: feat-01: Feature 1", "orchestrate: feat-02: Feature 2"]
    assert subjects(repo, "main") == ["initial"]


def test_a_shard_gets_its_own_branch_by_default(fake_api, tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    spec = write_spec(tmp_path, 4)

    result = run_cli(["run", str(spec), "--shard", "1/2"], repo, fake_api)

    assert result.code == 0, result.stderr
    assert subjects(repo, "main") == ["initial"]
    shard_commits = subjects(repo, "orchestrate/shard-1-of-2")[1:]
    assert shard_commits and all(s.startswith("orchestrate: feat-") for s in shard_commits)


def test_branch_outside_a_git_repository_is_a_usage_error(fake_api, tmp_path: Path) -> None:
    project = tmp_path / "plain"
    project.mkdir()
    spec = write_spec(tmp_path, 1)

    result = run_cli(["run", str(spec), "--branch", "work"], project, fake_api)

    assert result.code == 2
    assert "not a git repository" in result.stderr
    assert fake_api.calls == 0


def test_a_bad_branch_name_is_a_usage_error(fake_api, tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    spec = write_spec(tmp_path, 1)

    result = run_cli(["run", str(spec), "--branch", "bad..name"], repo, fake_api)

    assert result.code == 2
    assert "not a valid git branch name" in result.stderr
