"""`--jobs` worktrees: an ended feature's tree is reused for the next one, with nothing of it left.

`worktree add` writes every file of the project for each feature, which made each feature of a
long `--jobs` run dearer than the one before (`docs/benchmarks.md`, issue 29); a spare tree
checked out at the new head writes only what differs. These tests hold the two halves of that:
the tree is reused, and reuse carries nothing over from the feature before.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from orchestrator.git.carried_files import run_began
from orchestrator.git.worktrees import SPARE_PREFIX, Worktrees, work_branch


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def _repository(tmp_path: Path) -> Worktrees:
    root = tmp_path / "project"
    root.mkdir()
    _git(root, "init", "-q")
    (root / "app.py").write_text("print('v1')\n")
    (root / ".gitignore").write_text("build/\n")
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "-m", "start")
    return Worktrees(root, root / ".autonomous")


def test_an_ended_features_tree_is_the_next_features_and_nothing_of_it_is_left(tmp_path: Path) -> None:
    worktrees = _repository(tmp_path)
    first = worktrees.create("feat-a")
    inode = first.stat().st_ino
    (first / "app.py").write_text("print('changed, never committed')\n")
    (first / "left.txt").write_text("untracked\n")
    (first / "build").mkdir()
    (first / "build" / "out.bin").write_text("ignored\n")
    nested = first / "vendor"
    nested.mkdir()
    _git(nested, "init", "-q")  # a repository of its own inside the tree: plain `clean -fdx` keeps it
    (nested / "x.txt").write_text("nested\n")
    worktrees.remove("feat-a")

    second = worktrees.create("feat-b")

    assert second.stat().st_ino == inode  # the same directory, moved: not a new checkout
    assert sorted(p.name for p in second.iterdir()) == [".git", ".gitignore", "app.py"]
    assert (second / "app.py").read_text() == "print('v1')\n"
    assert _git(second, "status", "--porcelain", "--ignored") == ""
    assert _git(second, "rev-parse", "--abbrev-ref", "HEAD").strip() == work_branch("feat-b")
    assert _git(worktrees.root, "branch", "--list", work_branch("feat-a")) == ""
    assert not list(worktrees.base.glob(SPARE_PREFIX + "*"))


def test_the_spare_is_checked_out_at_the_users_head_as_it_is_now(tmp_path: Path) -> None:
    worktrees = _repository(tmp_path)
    worktrees.create("feat-a")
    worktrees.remove("feat-a")
    (worktrees.root / "app.py").write_text("print('v2')\n")
    _git(worktrees.root, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "-am", "v2")

    second = worktrees.create("feat-b")

    assert (second / "app.py").read_text() == "print('v2')\n"
    assert _git(second, "rev-parse", "HEAD") == _git(worktrees.root, "rev-parse", "HEAD")


def test_a_tree_whose_git_file_was_replaced_is_never_reused(tmp_path: Path) -> None:
    worktrees = _repository(tmp_path)
    other = worktrees.create("feat-other")
    first = worktrees.create("feat-a")
    # An agent's command points the tree at another worker's bookkeeping.
    (first / ".git").write_text((other / ".git").read_text())
    worktrees.remove("feat-a")

    assert not list(worktrees.base.glob(SPARE_PREFIX + "*"))
    second = worktrees.create("feat-b")
    assert (second / ".git").read_text() != (other / ".git").read_text()
    assert _git(second, "rev-parse", "--abbrev-ref", "HEAD").strip() == work_branch("feat-b")
    assert _git(other, "rev-parse", "--abbrev-ref", "HEAD").strip() == work_branch("feat-other")


def test_a_run_ends_with_no_spare_left(tmp_path: Path) -> None:
    worktrees = _repository(tmp_path)
    worktrees.create("feat-a")
    worktrees.remove("feat-a")
    assert list(worktrees.base.glob(SPARE_PREFIX + "*"))

    worktrees.prune_all()

    assert not list(worktrees.base.iterdir())
    assert _git(worktrees.root, "worktree", "list", "--porcelain").count("worktree ") == 1


def test_every_tree_carries_the_users_unchanged_ignored_files_and_nothing_a_run_made(tmp_path: Path) -> None:
    """As final verification's checkout (issue 41): an editable install's egg-info made before the run
    is in each feature's tree and the integration tree; bytecode and what the run made are not, and
    a feature's change to a carried file is not handed on to the next feature's tree."""
    worktrees = _repository(tmp_path)
    root = worktrees.root
    (root / ".gitignore").write_text("build/\n*.egg-info/\n__pycache__/\n")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "-am", "ignore more")
    with (root / ".gitignore").open("a") as ignore:  # not committed: the trees do not ignore it
        ignore.write("notes.txt\n")
    (root / "notes.txt").write_text("mine\n")
    egg = root / "app.egg-info"
    egg.mkdir()
    (egg / "PKG-INFO").write_text("Name: app\nVersion: 1.0\n")
    (root / "__pycache__").mkdir()
    (root / "__pycache__" / "app.cpython-311.pyc").write_bytes(b"forged")
    run_began(worktrees.run_times)
    (root / "build").mkdir()
    (root / "build" / "made-by-the-run.txt").write_text("the run's\n")

    first = worktrees.create("feat-a")
    integration = worktrees.reset_integration(worktrees.head())

    for tree in (first, integration):
        assert (tree / "app.egg-info" / "PKG-INFO").read_text() == "Name: app\nVersion: 1.0\n"
        assert not (tree / "__pycache__").exists() and not (tree / "build").exists()
        assert not (tree / "notes.txt").exists()
    (first / "app.egg-info" / "PKG-INFO").write_text("Name: app\nVersion: forged\n")
    worktrees.remove("feat-a")
    second = worktrees.create("feat-b")
    assert (second / "app.egg-info" / "PKG-INFO").read_text() == "Name: app\nVersion: 1.0\n"
    assert _git(second, "status", "--porcelain") == ""  # carried, never committed
