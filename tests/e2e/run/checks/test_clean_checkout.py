"""The tree final verification runs in: a clean checkout of the final commit, or the working tree
where there is no commit to check out."""

from __future__ import annotations

import subprocess
from pathlib import Path

from orchestrator.run.checks.clean_checkout import CLEAN_CHECKOUT, WORKING_TREE, verification_tree


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


def test_the_checkout_holds_the_commit_and_nothing_else_and_is_gone_afterwards(tmp_path: Path) -> None:
    _repository(tmp_path)
    checkout = tmp_path / ".autonomous/verify"
    checkout.mkdir(parents=True)
    (checkout / "left-by-a-kill").write_text("")  # a killed verification's leftovers

    with verification_tree(tmp_path, checkout, committed=True, on_warning=print) as tree:
        assert tree.kind == CLEAN_CHECKOUT and tree.scratch
        assert tree.commit == _git(tmp_path, "rev-parse", "HEAD").strip()
        assert (tree.path / "app/mod.py").read_text() == "x = 1\n"
        assert sorted(p.name for p in tree.path.iterdir()) == [".git", "app"]
        assert sorted(p.name for p in (tree.path / "app").iterdir()) == ["mod.py"]

    assert not checkout.exists()
    assert "verify" not in _git(tmp_path, "worktree", "list")


def test_a_subdirectory_project_is_verified_in_its_directory_of_the_checkout(tmp_path: Path) -> None:
    _repository(tmp_path)
    project = tmp_path / "app"
    with verification_tree(project, project / ".autonomous/verify", committed=True, on_warning=print) as tree:
        assert tree.path == project / ".autonomous/verify/app" and (tree.path / "mod.py").is_file()


def test_without_a_commit_to_check_out_the_working_tree_is_verified(tmp_path: Path) -> None:
    warnings: list[str] = []
    with verification_tree(tmp_path, tmp_path / ".autonomous/verify", committed=True, on_warning=warnings.append) as tree:
        assert tree.kind == WORKING_TREE and tree.path == tmp_path and tree.commit is None
    _git(tmp_path, "init", "-q")  # a repository with no commit yet
    with verification_tree(tmp_path, tmp_path / ".autonomous/verify", committed=True, on_warning=warnings.append) as tree:
        assert tree.kind == WORKING_TREE
    assert warnings and "working tree" in warnings[0]
    _repository(tmp_path / "repo")
    with verification_tree(tmp_path / "repo", tmp_path / "v", committed=False, on_warning=warnings.append) as tree:
        assert tree.kind == WORKING_TREE  # --no-commit: the work is not in any commit
