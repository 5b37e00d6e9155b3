"""A feature's footprint: the files its work changed plus the files its check names.

`ChangeWatch` finds the files a feature changed. In a git project that commits checkpoints
they are the files that differ from HEAD (the last checkpoint; failed work has left the tree),
which is exactly what the feature's checkpoint will commit. Without git, or under
`--no-commit` (where HEAD stays put and the diff from it would hold every earlier feature's
work too, so that every footprint met every other), the tree is snapshotted by content when
the feature starts and compared by content with the tree after its check: a file rewritten
with the same bytes is no change, so `affected` means the same with and without git.

Hashing every file at every feature would grow with the project; a `HashCache` shared by the
run's watches keeps each file's digest under its size, modification time and inode, so only
files whose stat changed are read again (as git's index does).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from orchestrator.git.run_git import CheckpointError
from orchestrator.git.tree import changed_since_head, is_ours
from orchestrator.run.checks.influence_snapshot import file_digest
from orchestrator.store.records import Footprint

# Directories never walked without git: tools' caches and environments, not the project's work.
_SKIPPED_DIRS = frozenset({".git", "__pycache__", "node_modules", ".venv", ".mypy_cache", ".pytest_cache"})
MAX_WALKED_FILES = 200_000  # a tree bigger than this is not snapshotted file by file

Stamp = tuple[int, int, int]  # size, modification time (ns), inode


class HashCache:
    """Path -> (stamp, digest) of the files seen so far in this run; safe across threads."""

    def __init__(self) -> None:
        self._known: dict[str, tuple[Stamp, str | None]] = {}
        self._lock = threading.Lock()

    def digest(self, path: str, stamp: Stamp) -> str | None:
        with self._lock:
            known = self._known.get(path)
        if known is not None and known[0] == stamp:
            return known[1]
        digest = file_digest(Path(path))
        with self._lock:
            self._known[path] = (stamp, digest)
        return digest


class ChangeWatch:
    """The files changed in `workspace` since the watch began (see the module's docstring).

    `by_git`: the project commits a checkpoint per feature (git finds the change); else the
    content snapshot does, with `hashes` the run's cache."""

    def __init__(self, workspace: Path, *, by_git: bool, hashes: HashCache) -> None:
        self.workspace, self.git, self.hashes = workspace, by_git, hashes
        self.before = {} if self.git else content_snapshot(workspace, hashes)

    def changed(self) -> list[str]:
        """Changed, added or deleted files, relative to the workspace, sorted."""
        if self.git:
            try:
                return changed_since_head(self.workspace)
            except CheckpointError:
                return []
        after = content_snapshot(self.workspace, self.hashes)
        keys = set(self.before) | set(after)
        return sorted(key for key in keys if self.before.get(key) != after.get(key))


def footprint(changed: list[str], check_files: list[str], earlier: Footprint | None = None) -> Footprint:
    """The footprint of a pass; a rebuilt feature keeps what its earlier pass touched too."""
    before = earlier.changed if earlier else []
    return Footprint(changed=sorted({*changed, *before}), check=sorted(set(check_files)))


def content_snapshot(root: Path, hashes: HashCache) -> dict[str, str | None]:
    """Relative path -> content digest of every project file under `root` (not ours, not caches).

    Runs twice per feature over a tree that grows with the run, so it walks with `os.scandir`
    and plain strings: one `lstat` per file (the directory listing's, often without a system
    call) and no `Path` per file, which made the walk cost 40 ms a feature at 300 files; only
    files whose stat changed are read (`HashCache`)."""
    found: dict[str, str | None] = {}
    todo = [(str(root), "")]
    while todo:
        directory, prefix = todo.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            key = prefix + entry.name
            if not prefix and is_ours(key):
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in _SKIPPED_DIRS:
                        todo.append((entry.path, key + "/"))
                    continue
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            found[key] = hashes.digest(entry.path, (info.st_size, info.st_mtime_ns, info.st_ino))
            if len(found) >= MAX_WALKED_FILES:
                return found
    return found
