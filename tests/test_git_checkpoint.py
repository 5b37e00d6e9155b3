"""A checkpoint commit per passed feature, never including the run's own state."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from orchestrator.git_checkpoint import CheckpointError, commit_checkpoint, is_git_repo

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.fixture(autouse=True)
def isolated_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads the real user's git configuration or identity."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / "gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "EMAIL"):
        monkeypatch.delenv(name, raising=False)
    for role in ("AUTHOR", "COMMITTER"):
        for part in ("NAME", "EMAIL"):
            monkeypatch.delenv(f"GIT_{role}_{part}", raising=False)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


def make_repo(path: Path, *, identity: bool = True) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q")
    if identity:
        git(path, "config", "user.name", "Dev Eloper")
        git(path, "config", "user.email", "dev@example.com")
    return path


def committed_files(repo: Path) -> list[str]:
    return git(repo, "ls-tree", "-r", "--name-only", "HEAD").splitlines()


def test_a_passed_feature_is_committed_with_its_message(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "project")
    (repo / "todo.py").write_text("class Todo: ...\n")

    sha = commit_checkpoint(repo, "orchestrate: todo-model passed")

    assert sha == git(repo, "rev-parse", "HEAD")
    assert git(repo, "log", "-1", "--format=%s|%an <%ae>") == (
        "orchestrate: todo-model passed|Dev Eloper <dev@example.com>"
    )
    assert committed_files(repo) == ["todo.py"]
    assert git(repo, "status", "--porcelain") == ""


def test_nothing_to_commit_gives_none(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "project")
    assert commit_checkpoint(repo, "empty repo") is None
    (repo / "a.txt").write_text("a\n")
    first = commit_checkpoint(repo, "first")
    assert first is not None
    assert commit_checkpoint(repo, "again") is None
    assert git(repo, "rev-parse", "HEAD") == first


def test_run_state_is_never_committed_and_gitignore_is_left_alone(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "project")
    (repo / ".gitignore").write_text("*.pyc\n")
    (repo / ".autonomous" / "state").mkdir(parents=True)
    (repo / ".autonomous" / "state" / "execution-state.json").write_text("{}\n")
    (repo / "app.py").write_text("print('hi')\n")

    assert commit_checkpoint(repo, "one") is not None
    (repo / "app.py").write_text("print('hello')\n")
    assert commit_checkpoint(repo, "two") is not None

    assert sorted(committed_files(repo)) == [".gitignore", "app.py"]
    assert (repo / ".gitignore").read_text() == "*.pyc\n"
    exclude = (repo / ".git" / "info" / "exclude").read_text()
    assert exclude.count("/.autonomous/") == 1
    assert git(repo, "status", "--porcelain") == ""


def test_state_dir_already_ignored_by_the_user_needs_no_exclude_entry(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "project")
    (repo / ".gitignore").write_text(".autonomous/\n")
    (repo / ".autonomous").mkdir()
    (repo / ".autonomous" / "events.jsonl").write_text("{}\n")
    assert commit_checkpoint(repo, "one") is not None
    assert committed_files(repo) == [".gitignore"]
    assert ".autonomous" not in (repo / ".git" / "info" / "exclude").read_text()


def test_a_project_inside_a_larger_repo_commits_only_its_own_files(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "monorepo")
    project = repo / "services" / "todo"
    (project / ".autonomous").mkdir(parents=True)
    (project / ".autonomous" / "events.jsonl").write_text("{}\n")
    (project / "todo.py").write_text("x = 1\n")
    (repo / "unrelated.txt").write_text("work in progress\n")
    (repo / "staged-by-user.txt").write_text("staged\n")
    git(repo, "add", "staged-by-user.txt")

    assert is_git_repo(project)
    assert commit_checkpoint(project, "todo passed") is not None

    assert committed_files(repo) == ["services/todo/todo.py"]
    assert git(repo, "status", "--porcelain").splitlines() == [
        "A  staged-by-user.txt",
        "?? unrelated.txt",
    ]


def test_commits_without_any_configured_identity(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "project", identity=False)
    # Refuse identities guessed from the host, as on a fresh CI machine.
    git(repo, "config", "user.useConfigOnly", "true")
    (repo / "a.txt").write_text("a\n")

    assert commit_checkpoint(repo, "first") is not None
    assert git(repo, "log", "-1", "--format=%an <%ae>") == "orchestrate <orchestrate@localhost>"


def test_a_plain_directory_is_not_a_repo(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert is_git_repo(plain) is False
    assert is_git_repo(tmp_path / "missing") is False
    with pytest.raises(CheckpointError, match="not a git repository"):
        commit_checkpoint(plain, "nope")


def test_without_git_installed_nothing_is_a_repo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "project")
    empty_bin = tmp_path / "empty-bin"
    empty_bin.mkdir()
    monkeypatch.setenv("PATH", str(empty_bin))
    assert is_git_repo(repo) is False
    with pytest.raises(CheckpointError, match="git is not installed"):
        commit_checkpoint(repo, "nope")


def test_checkpoints_run_no_hooks_and_git_sees_no_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A hook could have been planted by the agent; it must neither run nor see the key.
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-hook-test")
    repo = make_repo(tmp_path / "project")
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nenv > ../hook-ran.txt\nexit 1\n")
    hook.chmod(0o755)
    (repo / "a.txt").write_text("a\n")
    assert commit_checkpoint(repo, "checkpoint: a") is not None
    assert not (tmp_path / "hook-ran.txt").exists()

def test_checkpoints_never_push(tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    repo = make_repo(tmp_path / "project")
    git(repo, "remote", "add", "origin", str(remote))
    (repo / "a.txt").write_text("a\n")
    assert commit_checkpoint(repo, "local only") is not None
    assert git(remote, "for-each-ref") == ""
    assert os.listdir(remote / "refs" / "heads") == []


def test_an_exclude_file_that_is_a_link_is_not_written_through(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "project")
    outside = tmp_path / "bashrc"
    outside.write_text("export PS1='$ '\n")
    exclude = repo / ".git" / "info" / "exclude"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    exclude.unlink(missing_ok=True)
    exclude.symlink_to(outside)
    (repo / "todo.py").write_text("class Todo: ...\n")

    with pytest.raises(CheckpointError, match="symbolic link"):
        commit_checkpoint(repo, "orchestrate: todo-model passed")
    assert outside.read_text() == "export PS1='$ '\n"
