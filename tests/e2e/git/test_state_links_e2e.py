"""Issue 40, break 4: a hostile clone's `.autonomous/` leads nothing the program does out of the project.

The repository commits `.autonomous/worktrees -> ../../victim`. Before the fix, `orchestrate
run --jobs 2` pruned the worktrees it found there, i.e. emptied the victim directory beside
the project; no model is needed. Now a repository that tracks anything under `.autonomous` is
refused at the start (exit 2, one line, what to do) in every mode, a link left there untracked
is refused the same way, and the worktree removals themselves never follow a link. Nothing
here needs root or a sandbox.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from orchestrator.git.worktrees import Worktrees
from shared_base.files import LinkRefused
from tests.cli_helpers import file_tree, run_cli, write_spec
from tests.git_helpers import clone, git, init_repo

pytestmark = [
    pytest.mark.attack,
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
]

MODES = [pytest.param([], id="serial"), pytest.param(["--jobs", "2"], id="jobs")]


def _victim(tmp_path: Path) -> Path:
    victim = tmp_path / "victim"
    (victim / "docs").mkdir(parents=True)
    (victim / "thesis.tex").write_text("years of work\n")
    (victim / "docs/notes.txt").write_text("notes\n")
    return victim


def _hostile_clone(tmp_path: Path) -> Path:
    """A clone of a repository that commits `.autonomous/worktrees` as a link to `../../victim`."""
    upstream = init_repo(tmp_path / "upstream")
    (upstream / ".autonomous").mkdir()
    (upstream / ".autonomous/worktrees").symlink_to("../../victim", target_is_directory=True)
    git(upstream, "add", "-f", ".autonomous/worktrees")
    git(upstream, "commit", "-qm", "helpful tooling")
    project = clone(upstream, tmp_path / "project")
    assert (project / ".autonomous/worktrees").is_symlink()
    return project


@pytest.mark.parametrize("mode", MODES)
def test_a_clone_that_commits_a_link_under_autonomous_is_refused_and_the_victim_kept(
    fake_api: Any, tmp_path: Path, mode: list[str]
) -> None:
    victim = _victim(tmp_path)
    before = file_tree(victim)
    project = _hostile_clone(tmp_path)
    spec = write_spec(tmp_path, 2)

    result = run_cli(["run", str(spec), *mode], project, fake_api)

    assert file_tree(victim) == before, "the run deleted or changed files outside the project"
    assert result.code == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if "the repository commits" in line]
    assert len(lines) == 1, result.stderr
    assert ".autonomous/worktrees" in lines[0] and "git rm -r --cached .autonomous" in lines[0]
    assert fake_api.requests == []


@pytest.mark.parametrize("mode", MODES)
def test_a_link_left_under_autonomous_is_refused_at_the_start(fake_api: Any, tmp_path: Path, mode: list[str]) -> None:
    victim = _victim(tmp_path)
    before = file_tree(victim)
    project = init_repo(tmp_path / "project")
    (project / ".autonomous").mkdir()
    (project / ".autonomous/worktrees").symlink_to(victim, target_is_directory=True)
    spec = write_spec(tmp_path, 2)

    result = run_cli(["run", str(spec), *mode], project, fake_api)

    assert file_tree(victim) == before
    assert result.code == 2, result.stderr
    assert f"{project / '.autonomous/worktrees'} is a symbolic link (to {victim})" in result.stderr


def test_worktree_removal_never_follows_a_link(tmp_path: Path) -> None:
    victim = _victim(tmp_path)
    before = file_tree(victim)
    project = init_repo(tmp_path / "project")
    state = project / ".autonomous"
    trees = Worktrees(project, state)
    # A link in place of one worktree: removed as the link.
    (state / "worktrees").mkdir(parents=True)
    (state / "worktrees/feat-01").symlink_to(victim, target_is_directory=True)
    (state / "integration").symlink_to(victim, target_is_directory=True)
    trees.prune_all()
    assert not (state / "worktrees/feat-01").exists() and not (state / "worktrees/feat-01").is_symlink()
    assert not (state / "integration").is_symlink()
    assert file_tree(victim) == before
    # The worktrees directory itself a link: refused, nothing removed through it.
    shutil.rmtree(state / "worktrees")
    (state / "worktrees").symlink_to(victim, target_is_directory=True)
    with pytest.raises(LinkRefused):
        trees.prune_all()
    assert file_tree(victim) == before


# Every command that reads `.autonomous` gets the start check, in one place (`open_project`).
READERS = [
    pytest.param(["status"], id="status"),
    pytest.param(["logs"], id="logs"),
    pytest.param(["logs", "feat-01"], id="logs-one"),
    pytest.param(["combine", "{spec}", "{artifact}"], id="combine"),
    pytest.param(["verify"], id="verify"),
    pytest.param(["report"], id="report"),
    pytest.param(["context", "--spec", "{spec}"], id="context"),
    pytest.param(["summarize", "--spec", "{spec}"], id="summarize"),
    pytest.param(["export", "{artifact}"], id="export"),
    pytest.param(["validate", "{spec}", "--run-checks"], id="validate"),
]


@pytest.mark.parametrize("command", READERS)
def test_every_command_that_reads_the_state_refuses_a_clone_that_commits_it(
    fake_api: Any, tmp_path: Path, command: list[str]
) -> None:
    victim = _victim(tmp_path)
    before = file_tree(victim)
    project = _hostile_clone(tmp_path)
    spec = write_spec(tmp_path, 2)
    args = [arg.format(spec=spec, artifact=tmp_path / "artifact") for arg in command]

    result = run_cli(args, project, fake_api)

    assert result.code == 2, result.stdout + result.stderr
    lines = [line for line in result.stderr.splitlines() if "the repository commits" in line]
    assert len(lines) == 1 and "git rm -r --cached .autonomous" in lines[0], result.stderr
    assert file_tree(victim) == before
    assert not (tmp_path / "artifact").exists()
    assert fake_api.requests == []
