"""A `.git` that appears during a run which started without one: refused, removed, never followed;
and no removal or read under `.autonomous/` goes through a link."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.git.repository_guard import (
    foreign_git,
    mark_repository,
    record_git_at_start,
    refused_repository,
    remove_foreign_git,
)
from orchestrator.store.disk.atomic import remove_no_follow
from orchestrator.user_errors import UsageError
from shared_base.files import LinkRefused, TooLarge, read_bounded


def _agent_git(project: Path) -> Path:
    git = project / ".git"
    (git / "info").mkdir(parents=True)
    (git / "config").write_text('[filter "x"]\n\tclean = evil\n')
    return git


def test_a_git_made_after_a_start_without_one_is_refused_and_removed(tmp_path: Path) -> None:
    record_git_at_start(tmp_path)
    assert foreign_git(tmp_path) is None
    git = _agent_git(tmp_path)
    (tmp_path / "src").mkdir()
    assert foreign_git(tmp_path) == git
    assert refused_repository(tmp_path / "src") == git  # git run anywhere below finds it
    assert remove_foreign_git(tmp_path) == git
    assert not git.exists() and (tmp_path / "src").is_dir()


def test_a_git_there_at_the_start_is_the_projects(tmp_path: Path) -> None:
    git = _agent_git(tmp_path)
    record_git_at_start(tmp_path)
    assert foreign_git(tmp_path) is None and refused_repository(tmp_path) is None
    assert remove_foreign_git(tmp_path) is None and git.is_dir()


def test_at_the_next_start_it_is_refused_and_nothing_deleted(tmp_path: Path) -> None:
    record_git_at_start(tmp_path)
    git = _agent_git(tmp_path)
    with pytest.raises(UsageError, match="was not there when this run started"):
        record_git_at_start(tmp_path)
    assert (git / "config").is_file()
    mark_repository(tmp_path, present=True)  # the program's own `git init` (--jobs)
    record_git_at_start(tmp_path)


def test_a_git_link_is_removed_as_the_link(tmp_path: Path) -> None:
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    (elsewhere / "keep").mkdir(parents=True)
    record_git_at_start(project)
    (project / ".git").symlink_to(elsewhere, target_is_directory=True)
    assert remove_foreign_git(project) == project / ".git"
    assert not (project / ".git").is_symlink() and (elsewhere / "keep").is_dir()


def test_removal_never_enters_a_link_inside(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "thesis.tex").write_text("years\n")
    tree = tmp_path / "project/.autonomous/worktrees/feat-01"
    tree.mkdir(parents=True)
    (tree / "inside").symlink_to(victim, target_is_directory=True)
    assert remove_no_follow(tree)
    assert not tree.exists() and (victim / "thesis.tex").read_text() == "years\n"
    assert not remove_no_follow(tree)


def test_a_state_file_is_never_read_through_a_link(tmp_path: Path) -> None:
    secret = tmp_path / "id_rsa"
    secret.write_text("PRIVATE KEY\n")
    store = tmp_path / "project/.autonomous/context/running-summary.json"
    store.parent.mkdir(parents=True)
    store.symlink_to(secret)
    with pytest.raises(LinkRefused, match="symbolic link"):
        read_bounded(store, 1_000)
    store.unlink()
    store.write_text('{"summary": ""}\n')
    assert read_bounded(store, 1_000) == b'{"summary": ""}\n'
    with pytest.raises(TooLarge):
        read_bounded(store, 4)
