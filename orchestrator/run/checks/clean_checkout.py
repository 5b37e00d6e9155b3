"""The tree final verification runs in: a clean checkout of the final commit, in `.autonomous/verify/`.

Exit 0 promises that each passed feature's check passes on a clean checkout of the final commit,
so that is where the checks run again: a detached git worktree of the workspace's HEAD, holding
exactly what is committed. No ignored or untracked file comes along (a module the agent left out
of its commit, a forged `__pycache__/*.pyc`), and bytecode that was committed (`*.pyc`,
`__pycache__/`) is deleted from the checkout before any check runs, so Python and pytest compile
from the sources. The checkout is removed afterwards (and at the next verification if a kill
left it behind).

Where there is no commit to check out (not a git repository, `--no-commit`, no commit yet), or git
cannot make the worktree, the checks run in the working tree as before, and the caller is told.
Git runs as checkpoints run it (`git_safety`): no hooks, no repository-config programs.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from orchestrator.git.checkpoint import is_git_repo
from orchestrator.git.run_git import CheckpointError, check_git, run_git, safe_config
from orchestrator.store.atomic import refuse_links, remove_no_follow

CLEAN_CHECKOUT = "clean-checkout"
WORKING_TREE = "working-tree"


@dataclass(frozen=True)
class VerificationTree:
    """Where the checks run: the project's directory in the checkout, or the workspace itself."""

    path: Path
    kind: str
    """`clean-checkout` or `working-tree`."""
    commit: str | None = None
    """The commit checked out (None in the working tree)."""

    @property
    def scratch(self) -> bool:
        """Whether what the checks change there is thrown away (nothing to put back)."""
        return self.kind == CLEAN_CHECKOUT


@contextmanager
def verification_tree(
    workspace: Path, checkout_dir: Path, *, committed: bool, on_warning: Callable[[str], None],
) -> Iterator[VerificationTree]:
    """A clean checkout of `workspace`'s HEAD at `checkout_dir` when `committed` (checkpoints are made)
    and git can make one; else the working tree. The checkout is gone when the block ends."""
    if not committed or not is_git_repo(workspace):
        yield VerificationTree(workspace, WORKING_TREE)
        return
    try:
        tree = _check_out(workspace, checkout_dir)
    except CheckpointError as err:
        on_warning(f"final verification runs in the working tree: no clean checkout of the final commit ({err})")
        yield VerificationTree(workspace, WORKING_TREE)
        return
    try:
        yield tree
    finally:
        remove_checkout(workspace, checkout_dir)


def _check_out(workspace: Path, checkout_dir: Path) -> VerificationTree:
    commit = check_git(workspace, "rev-parse", "--verify", "HEAD^{commit}").stdout.strip()
    prefix = check_git(workspace, "rev-parse", "--show-prefix").stdout.strip()
    remove_checkout(workspace, checkout_dir)  # a killed verification's
    checkout_dir.parent.mkdir(parents=True, exist_ok=True)
    check_git(workspace, *safe_config(workspace), "worktree", "add", "--quiet", "--force", "--detach",
              str(checkout_dir), commit)
    drop_bytecode(checkout_dir)
    return VerificationTree(checkout_dir / prefix if prefix else checkout_dir, CLEAN_CHECKOUT, commit)


def uncommitted(workspace: Path) -> list[str]:
    """The files of `workspace` that differ from HEAD or are untracked (not ignored): what a clean
    checkout leaves out. Empty when git cannot say."""
    status = run_git(workspace, "status", "--porcelain", "-z", "--untracked-files=normal", "--", ".")
    if status.returncode != 0:
        return []
    entries = status.stdout.split("\0")
    names, index = [], 0
    while index < len(entries):
        entry, index = entries[index], index + 1
        if len(entry) > 3:
            names.append(entry[3:])
            if entry[0] in "RC":  # a rename or copy: its source follows
                index += 1
    return names


def drop_bytecode(root: Path) -> list[Path]:
    """Delete every `__pycache__/` and `*.pyc`/`*.pyo` below `root` (never `.git`); what was deleted."""
    dropped: list[Path] = []
    for current, dirs, names in os.walk(root):
        if ".git" in dirs:
            dirs.remove(".git")
        for name in [d for d in dirs if d == "__pycache__"]:
            dirs.remove(name)
            path = Path(current) / name
            shutil.rmtree(path, ignore_errors=True)
            dropped.append(path)
        for name in names:
            if name.endswith((".pyc", ".pyo")):
                path = Path(current) / name
                path.unlink(missing_ok=True)
                dropped.append(path)
    return dropped


def remove_checkout(workspace: Path, checkout_dir: Path) -> None:
    """The checkout at `checkout_dir` and git's record of it, gone (quietly, if it was not there)."""
    refuse_links(checkout_dir.parent)  # what lies through a link is not the program's to delete
    if not checkout_dir.is_symlink() and os.path.lexists(checkout_dir / ".git"):
        run_git(workspace, "worktree", "remove", "--force", "--force", str(checkout_dir))
    remove_no_follow(checkout_dir)
    run_git(workspace, "worktree", "prune")
