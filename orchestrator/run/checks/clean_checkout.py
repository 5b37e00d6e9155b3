"""The tree verification runs in: a checkout of the final commit, outside the project.

Exit 0 promises that each passed feature's check passes on a fresh clone of the final commit set
up as the user set up the project, so that is where final verification and `orchestrate verify`
run the checks again (docs/verification.md):

- the commit's files (`verify` without `--committed`: plus the uncommitted changes to tracked
  files and the untracked files that are not ignored, read through a private index: the user's
  index and tree are left alone), written by git into a private temporary directory
  (`orchestrate-verify-<project key>-*`, mode 0700), never inside the project;
- plus the project's ignored files that no run made or changed (`carried_files`): the user's
  environment (an egg-info, a generated `_version.py`, a compiled extension, a `.venv`);
- never bytecode: `__pycache__/`, `*.pyc` and `*.pyo` are deleted before any check runs.

In the sandbox the checkout is mounted where the live repository is (`StandIn`): the live tree
is out of sight (code that reaches back to it finds the checkout), and absolute paths into the
project (an editable install's) lead into the checkout. The checkout has no `.git`: nothing of
the live repository is in reach. It is removed afterwards, and at the next verification of the
project if a kill left it behind.

Where there is no commit (not a git repository, `--no-commit`, no commit yet), or git cannot
write the checkout, the checks run in the working tree as before, and the caller is told.
Git runs through `run_git`, with the repository's own config neutralized (`safe_config`).
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.git.carried_files import Carried, RunTimes, carry_ignored
from orchestrator.git.checkpoint import is_git_repo
from orchestrator.git.run_git import CheckpointError, check_git, run_git, safe_config
from orchestrator.git.tree import TreeSnapshot
from orchestrator.store.disk.paths import STATE_DIR_NAME

CLEAN_CHECKOUT = "clean-checkout"
WORKING_TREE = "working-tree"
CHECKOUT_PREFIX = "orchestrate-verify-"


@dataclass(frozen=True)
class VerificationTree:
    """Where the checks run: the project's directory in the checkout, or the workspace itself."""

    path: Path
    kind: str
    """`clean-checkout` or `working-tree`."""
    commit: str | None = None
    """The commit checked out (None in the working tree)."""
    checkout: Path | None = None
    """The checkout's root, standing in for `live` (the live repository's top level)."""
    live: Path | None = None
    changes: tuple[str, ...] = ()
    """Uncommitted changes verified with the commit (`orchestrate verify` without `--committed`)."""
    carried: Carried = field(default_factory=Carried)
    """The project's ignored files the checkout got, and those it did not."""

    @property
    def scratch(self) -> bool:
        """Whether what the checks change there is thrown away (nothing to put back)."""
        return self.kind == CLEAN_CHECKOUT


@contextmanager
def verification_tree(
    workspace: Path, run_times: Path, *, committed: bool, on_warning: Callable[[str], None],
    with_changes: bool = False, share_dirs: bool = False,
) -> Iterator[VerificationTree]:
    """A checkout of `workspace`'s HEAD (`with_changes`: and of its uncommitted changes) with its
    carried ignored files (`run_times`: when runs worked there; `share_dirs`: the checks run in the
    sandbox, untouched ignored directories are shown there read-only rather than copied), when
    `committed` (checkpoints are made) and git can make one; else the working tree. The checkout
    is gone when the block ends."""
    if not committed or not is_git_repo(workspace):
        yield VerificationTree(workspace, WORKING_TREE)
        return
    times = RunTimes.load(run_times)  # a link there: LinkRefused, the command stops (no working-tree fallback)
    try:
        checkout = private_directory(workspace)
    except OSError as err:
        on_warning(f"final verification runs in the working tree: no clean checkout of the final commit ({err})")
        yield VerificationTree(workspace, WORKING_TREE)
        return
    try:
        tree = _check_out(workspace, checkout, times, with_changes, share_dirs)
    except BaseException as err:  # Ctrl-C too: the half-written checkout goes
        remove_tree(checkout)
        if not isinstance(err, (CheckpointError, OSError)):
            raise
        on_warning(f"final verification runs in the working tree: no clean checkout of the final commit ({err})")
        yield VerificationTree(workspace, WORKING_TREE)
        return
    try:
        yield tree
    finally:
        remove_tree(checkout)


def checkout_base(workspace: Path, kind: str = "verify") -> tuple[Path, str]:
    """The directory `workspace`'s checkouts of `kind` (`verify`; `combine`: its integration
    worktree) are made in (the temporary one, never inside the project), and the start of their
    names there."""
    key = hashlib.sha256(str(workspace.resolve()).encode()).hexdigest()[:16]
    base = Path(tempfile.gettempdir()).resolve()
    if base == workspace.resolve() or workspace.resolve() in base.parents:
        base = Path("/tmp")
    return base, f"orchestrate-{kind}-{key}-"


def private_directory(workspace: Path, kind: str = "verify") -> Path:
    """A new 0700 directory for `workspace`'s checkout of `kind`, outside the project; those of
    that kind a kill left behind removed."""
    if kind == "verify":
        _remove_legacy(workspace)
    return PrivateDirectory.of(workspace, kind).make()


@dataclass(frozen=True)
class PrivateDirectory:
    """A private directory outside the project for `workspace`'s checkout of `kind`, named when
    it is built (unguessable, as `mkdtemp`'s) and made by `make`: its owner can hand out paths in
    it (the `--jobs` merge queue's integration tree) before anything is on disk, so nothing is
    left behind by a run that stops before it begins; `remove` takes it away."""

    path: Path
    prefix: str

    @classmethod
    def of(cls, workspace: Path, kind: str) -> PrivateDirectory:
        base, prefix = checkout_base(workspace, kind)
        return cls(base / f"{prefix}{secrets.token_hex(8)}", prefix)

    def make(self) -> Path:
        """The directory, made 0700 (refused if anything is at its path: nothing is followed),
        those of its kind a kill left behind removed first."""
        for leftover in self.path.parent.glob(f"{self.prefix}*"):
            try:
                info = leftover.lstat()
            except OSError:
                continue
            if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid():
                remove_tree(leftover)
        os.mkdir(self.path, stat.S_IRWXU)
        return self.path

    def remove(self) -> None:
        remove_tree(self.path)


def _remove_legacy(workspace: Path) -> None:
    """An earlier version's checkout in `.autonomous/verify/`, and git's record of it."""
    legacy = workspace / STATE_DIR_NAME / "verify"
    if legacy.is_dir() and not legacy.is_symlink() and not (workspace / STATE_DIR_NAME).is_symlink():
        remove_tree(legacy)
        run_git(workspace, "worktree", "prune")


def _check_out(
    workspace: Path, checkout: Path, times: RunTimes, with_changes: bool, share_dirs: bool
) -> VerificationTree:
    commit = check_git(workspace, "rev-parse", "--verify", "HEAD^{commit}").stdout.strip()
    prefix = check_git(workspace, "rev-parse", "--show-prefix").stdout.strip()
    top = Path(check_git(workspace, "rev-parse", "--show-toplevel").stdout.strip())
    changes: tuple[str, ...] = ()
    if with_changes:
        changes = tuple(uncommitted(workspace))
        with TreeSnapshot(workspace) as snapshot:
            _write_tree(top, checkout, snapshot.tree)
    else:
        _write_tree(top, checkout, commit)
    drop_bytecode(checkout)
    path = checkout / prefix if prefix else checkout
    path.mkdir(parents=True, exist_ok=True)
    carried = carry_ignored(workspace, path, times, share_dirs=share_dirs)
    return VerificationTree(path, CLEAN_CHECKOUT, commit, checkout, top, changes, carried)


def _write_tree(top: Path, checkout: Path, tree: str) -> None:
    """The files of `tree` (a commit or a tree) written into `checkout` by git, through a private index."""
    handle, name = tempfile.mkstemp(prefix="orchestrate-index-")
    os.close(handle)
    index = Path(name)
    index.unlink()  # git makes it: an empty file is no index
    safe = safe_config(top)
    try:
        check_git(top, *safe, "read-tree", tree, index_file=index)
        check_git(top, *safe, "checkout-index", "--all", "--force", f"--prefix={checkout}/", index_file=index)
    finally:
        index.unlink(missing_ok=True)


def uncommitted(workspace: Path) -> list[str]:
    """The files of `workspace` that differ from HEAD or are untracked (not ignored): what a
    checkout of the commit leaves out. Empty when git cannot say."""
    # No optional locks: status would otherwise refresh (rewrite) the user's index.
    status = run_git(workspace, "--no-optional-locks", "status", "--porcelain", "-z", "--untracked-files=normal", "--", ".")
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
    return [name for name in names if not name.startswith(f"{STATE_DIR_NAME}/")]


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


def remove_tree(path: Path) -> None:
    """`path` and everything below it gone, directories a check made read-only included."""

    def writable_again(function: Callable[..., Any], failed: str, _error: object) -> None:
        try:
            os.chmod(os.path.dirname(failed), stat.S_IRWXU)
            if os.path.isdir(failed) and not os.path.islink(failed):
                os.chmod(failed, stat.S_IRWXU)
            function(failed)
        except OSError:
            pass

    if path.is_symlink():
        path.unlink(missing_ok=True)
    elif path.exists():
        shutil.rmtree(path, onerror=writable_again)
