"""Failed work leaves the tree: committed to `orchestrate/failed/<id>`, the tree back at the last checkpoint.

A feature that ends `failed` would otherwise leave its half-done code in the working tree, to
be committed under the next passing feature's checkpoint. `park_failed_work` commits what the
feature changed to its own branch (never the user's; the user's staging area is not touched)
and puts the changed files back as the last checkpoint (HEAD) has them. Ignored files are never
touched. What the user had uncommitted when the run started is never reset (`StartOfRun`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.git.commit_filter import EMPTY_TREE
from orchestrator.git.run_git import CheckpointError, check_git, run_git, safe_config
from orchestrator.git.tree import TreeSnapshot, differing, head_or_empty, split_z

BRANCH_PREFIX = "orchestrate/failed/"
_IDENTITY = {"user.name": "orchestrate", "user.email": "orchestrate@localhost"}


@dataclass(frozen=True)
class StartOfRun:
    """The tree when the run started: which files the user had uncommitted, and their content."""

    tree: str
    dirty: frozenset[str]

    @classmethod
    def take(cls, root: Path) -> StartOfRun:
        """Raises CheckpointError when git cannot say."""
        with TreeSnapshot(root) as snapshot:
            return cls(snapshot.tree, frozenset(differing(root, head_or_empty(root), snapshot.tree)))


@dataclass
class Parked:
    """Where a failed feature's work went, and what was said about it."""

    branch: str | None = None
    sha: str | None = None
    kept: list[str] = field(default_factory=list)  # files left as they were (the user's uncommitted work)
    notes: list[str] = field(default_factory=list)


def park_failed_work(repo: Path, feature_id: str, message: str, start: StartOfRun | None) -> Parked:
    """Commit `repo`'s changes since HEAD to `orchestrate/failed/<feature_id>` and reset them.

    `start` None means the tree at the start of the run is unknown: nothing is reset then.
    Raises CheckpointError when git fails; the tree is then left as it was.
    """
    parked = Parked()
    head = head_or_empty(repo)
    with TreeSnapshot(repo) as snapshot:
        changed = sorted(differing(repo, head, snapshot.tree))
        if not changed:
            parked.notes.append("it left no changes in the tree")
            return parked
        parents = [] if head == EMPTY_TREE else ["-p", head]
        sha = check_git(repo, *snapshot.safe, *_identity(repo), "commit-tree", snapshot.tree, *parents, "-F", "-",
                        stdin=message)
        parked.sha = sha.stdout.strip()
    parked.branch = _create_branch(repo, feature_id, parked.sha, parked.notes)
    resettable = _resettable(repo, changed, start, parked)
    _reset(repo, head, resettable)
    return parked


def _identity(repo: Path) -> list[str]:
    options: list[str] = []
    for key, fallback in _IDENTITY.items():
        if run_git(repo, "config", "--get", key).returncode != 0:
            options += ["-c", f"{key}={fallback}"]
    return options


def _create_branch(repo: Path, feature_id: str, sha: str, notes: list[str]) -> str:
    """`orchestrate/failed/<id>`; when that exists (an earlier run's), `-2`, `-3`, ... instead: nothing is overwritten."""
    wanted = BRANCH_PREFIX + feature_id
    for number in range(1, 1000):
        name = wanted if number == 1 else f"{wanted}-{number}"
        # The empty old value: created only if it does not exist, atomically.
        if run_git(repo, "update-ref", "-m", "orchestrate: failed work", f"refs/heads/{name}", sha, "").returncode == 0:
            if name != wanted:
                notes.append(f"branch {wanted} already exists (kept as it is); this work is on {name}")
            return name
    raise CheckpointError(f"no free branch name after {wanted}-999")


def _resettable(repo: Path, changed: list[str], start: StartOfRun | None, parked: Parked) -> list[str]:
    """The changed files that may go back to HEAD: not those holding uncommitted work the user had at the start."""
    if start is None:
        parked.kept = changed
        parked.notes.append("the tree at the start of the run is unknown, so nothing was reset")
        return []
    not_in_head = differing(repo, head_or_empty(repo), start.tree)
    parked.kept = [path for path in changed if path in start.dirty and path in not_in_head]
    if parked.kept:
        parked.notes.append(
            f"left in the tree, not reset: {', '.join(parked.kept[:10])} (uncommitted changes there before the run "
            "started; commit or stash them to have failed work removed)"
        )
    return [path for path in changed if path not in parked.kept]


def _reset(repo: Path, head: str, paths: list[str]) -> None:
    """Put `paths` back as `head` has them; a file `head` lacks (new, not ignored) is removed."""
    if not paths:
        return
    in_head = set()
    if head != EMPTY_TREE:
        listed = check_git(repo, "ls-tree", "-r", "-z", "--name-only", "--full-name", head, "--", *paths)
        prefix = check_git(repo, "rev-parse", "--show-prefix").stdout.strip()
        in_head = {name.removeprefix(prefix) for name in split_z(listed.stdout)}
    for path in paths:
        if path not in in_head:
            target = repo / path
            if target.is_file() or target.is_symlink():
                target.unlink()
    restore = [path for path in paths if path in in_head]
    if restore:
        check_git(repo, *safe_config(repo), "restore", "--source", head, "--worktree", "--", *restore)
