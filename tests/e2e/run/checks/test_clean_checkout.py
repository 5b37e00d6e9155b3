"""The tree final verification runs in: a checkout of the final commit outside the project, with
the ignored files no run made, or the working tree where there is no commit to check out."""

from __future__ import annotations

import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

from orchestrator.run.checks.clean_checkout import CLEAN_CHECKOUT, WORKING_TREE, checkout_base, verification_tree


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def _repository(root: Path) -> None:
    (root / "app").mkdir(parents=True)
    (root / "app/mod.py").write_text("x = 1\n")
    (root / "app/__pycache__").mkdir()
    (root / "app/__pycache__/mod.cpython-311.pyc").write_bytes(b"committed bytecode")
    (root / "app/old.pyc").write_bytes(b"sourceless bytecode")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "init")
    (root / ".gitignore").write_text("ignored.txt\n")  # untracked itself
    (root / "ignored.txt").write_text("ignored\n")
    (root / "app/mod.py").write_text("x = 2\n")  # not committed


def _leftovers(workspace: Path) -> list[Path]:
    """`workspace`'s checkouts on disk: not those of verifications other tests (or other
    processes on the machine) run meanwhile in the same temporary directory."""
    base, prefix = checkout_base(workspace)
    return list(base.glob(f"{prefix}*"))


def test_the_checkout_holds_the_commit_outside_the_project_and_is_gone_afterwards(tmp_path: Path) -> None:
    _repository(tmp_path)
    legacy = tmp_path / ".autonomous/verify"
    legacy.mkdir(parents=True)
    (legacy / "left-by-an-older-version").write_text("")
    before = set(_leftovers(tmp_path))

    with verification_tree(tmp_path, tmp_path / "run-times.json", committed=True, on_warning=print) as tree:
        assert tree.kind == CLEAN_CHECKOUT and tree.scratch
        assert tree.commit == _git(tmp_path, "rev-parse", "HEAD").strip()
        assert tree.checkout is not None and tree.live == tmp_path
        assert tmp_path not in tree.path.parents and tree.path.parent == Path(tempfile.gettempdir()).resolve()
        assert stat.S_IMODE(tree.path.stat().st_mode) == 0o700
        assert (tree.path / "app/mod.py").read_text() == "x = 1\n"
        # the commit, and the ignored file no run made; no `.git`, no bytecode, not the uncommitted edit
        assert sorted(p.name for p in tree.path.iterdir()) == ["app", "ignored.txt"]
        assert sorted(p.name for p in (tree.path / "app").iterdir()) == ["mod.py"]

    assert not legacy.exists() and set(_leftovers(tmp_path)) == before


def test_a_checkout_a_kill_left_behind_goes_at_the_next_verification(tmp_path: Path) -> None:
    _repository(tmp_path)
    with verification_tree(tmp_path, tmp_path / "times", committed=True, on_warning=print) as tree:
        killed = tree.path
        shutil.copytree(killed, killed.with_name(killed.name + "-copy"))  # what a kill -9 leaves: the checkout
    left = killed.with_name(killed.name + "-copy")
    assert left.is_dir()
    (left / "app").chmod(0o500)  # a check made it read-only
    with verification_tree(tmp_path, tmp_path / "times", committed=True, on_warning=print):
        assert not left.exists()


def test_with_changes_the_checkout_holds_what_you_have_and_your_index_is_untouched(tmp_path: Path) -> None:
    _repository(tmp_path)
    (tmp_path / "new.py").write_text("y = 1\n")
    status = _git(tmp_path, "status", "--porcelain")
    index = (tmp_path / ".git/index").read_bytes()
    with verification_tree(tmp_path, tmp_path / "times", committed=True, on_warning=print, with_changes=True) as tree:
        assert (tree.path / "app/mod.py").read_text() == "x = 2\n" and (tree.path / "new.py").is_file()
        assert (tree.path / "ignored.txt").is_file() and sorted(tree.changes) == [".gitignore", "app/mod.py", "new.py"]
    assert (tmp_path / ".git/index").read_bytes() == index and _git(tmp_path, "--no-optional-locks", "status", "--porcelain") == status


def test_a_subdirectory_project_is_verified_in_its_directory_of_the_checkout(tmp_path: Path) -> None:
    _repository(tmp_path)
    project = tmp_path / "app"
    with verification_tree(project, tmp_path / "times", committed=True, on_warning=print) as tree:
        assert tree.checkout is not None and tree.path == tree.checkout / "app" and (tree.path / "mod.py").is_file()
        assert tree.live == tmp_path


def test_without_a_commit_to_check_out_the_working_tree_is_verified(tmp_path: Path) -> None:
    warnings: list[str] = []
    times = tmp_path / "times"
    with verification_tree(tmp_path, times, committed=True, on_warning=warnings.append) as tree:
        assert tree.kind == WORKING_TREE and tree.path == tmp_path and tree.commit is None
    _git(tmp_path, "init", "-q")  # a repository with no commit yet
    with verification_tree(tmp_path, times, committed=True, on_warning=warnings.append) as tree:
        assert tree.kind == WORKING_TREE
    assert warnings and "working tree" in warnings[0]
    _repository(tmp_path / "repo")
    with verification_tree(tmp_path / "repo", times, committed=False, on_warning=warnings.append) as tree:
        assert tree.kind == WORKING_TREE  # --no-commit: the work is not in any commit
