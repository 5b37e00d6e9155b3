"""A feature's footprint: the files its work changed plus the files its check names.

`ChangeWatch` finds the files a feature changed. In a git project that commits checkpoints
they are the files that differ from HEAD (the last checkpoint; failed work has left the tree),
which is exactly what the feature's checkpoint will commit. Without git, or under
`--no-commit` (where HEAD stays put and the diff from it would hold every earlier feature's
work too, so that every footprint met every other), the files are compared by content when the
feature starts and after its check: a file rewritten with the same bytes is no change, so
`affected` means the same with and without git.

Walking the whole tree twice per feature would grow with the project (at 10,000 files, 40 ms
a walk), so the run keeps one `TreeLedger` per tree: every file's digest, brought up to date
from inotify's list of written paths (`inotify_watch`), which costs what the feature changed,
not what the project holds. Where inotify is not available, or lost events, the ledger walks
the tree and reads again only the files whose size, modification time or inode changed (as
git's index does, and as git does it does not trust the stamp of a file modified in the last
second before it was taken: a same-size rewrite within one tick of the file system's clock
keeps the stamp, so such a file is read again at the next walk).
"""

from __future__ import annotations

import os
import stat
import threading
import time
import weakref
from pathlib import Path

from orchestrator.git.run_git import CheckpointError
from orchestrator.git.tree import changed_since_head, is_ours
from orchestrator.run.checks.guard.inotify_watch import InotifyWatch
from orchestrator.run.checks.influence.influence_snapshot import file_digest
from orchestrator.store.records import Footprint

# Directories never walked without git: tools' caches and environments, not the project's work.
_SKIPPED_DIRS = frozenset({".git", "__pycache__", "node_modules", ".venv", ".mypy_cache", ".pytest_cache"})
MAX_WALKED_FILES = 200_000  # a tree bigger than this is not walked file by file

Stamp = tuple[int, int, int]  # size, modification time (ns), inode
Known = tuple[Stamp | None, str | None]  # a file's stamp and digest as last seen
# A file modified this close to when its stamp is taken may change again with the same stamp.
RACY_NS = 1_000_000_000


def walked_dir(relative: str) -> bool:
    """Whether a directory (relative to the tree) holds project work that the footprint counts."""
    name = relative.rsplit("/", 1)[-1]
    return name not in _SKIPPED_DIRS and ("/" in relative or not is_ours(relative))


class TreeLedger:
    """One tree's files, path -> digest, and every change found since the run began, in order.

    `refresh` brings the digests up to date and returns the position of the change log after
    it; `changed_since(position)` names the files whose content differs from what it was then.
    Safe across threads."""

    def __init__(self, root: Path, *, use_inotify: bool = True) -> None:
        self.root = str(root)
        self._lock = threading.Lock()
        self._known: dict[str, Known] = {}
        self._log: list[tuple[str, str | None]] = []  # (path, digest before the change)
        # Watching starts before the first walk, so that nothing written meanwhile is missed.
        self._watch = InotifyWatch.start(self.root, walked_dir) if use_inotify else None
        if self._watch is not None:
            weakref.finalize(self, self._watch.close)
        self._walk()

    @property
    def watching(self) -> bool:
        return self._watch is not None

    def refresh(self) -> int:
        with self._lock:
            found = self._watch.drain() if self._watch is not None else None
            if found is None:
                if self._watch is not None and self._watch.broken:
                    self._watch.close()
                    self._watch = None  # part of the tree is not watched: walk from now on
                self._walk()
            else:
                files, gone = found
                for directory in gone:
                    prefix = directory + "/"
                    files.update(path for path in self._known if path.startswith(prefix))
                for path in files:
                    if "/" in path or not is_ours(path):
                        self._look_at(path)
            return len(self._log)

    def changed_since(self, position: int) -> list[str]:
        """Changed, added or deleted files since `position` (a `refresh`'s), relative to the tree, sorted."""
        with self._lock:
            before: dict[str, str | None] = {}
            for path, digest in self._log[position:]:
                before.setdefault(path, digest)
            return sorted(path for path, digest in before.items() if self._digest(path) != digest)

    def _digest(self, path: str) -> str | None:
        known = self._known.get(path)
        return known[1] if known else None

    def _note(self, path: str, known: Known) -> None:
        old = self._digest(path)
        if known[1] is None:
            self._known.pop(path, None)
        else:
            self._known[path] = known
        if known[1] != old:
            self._log.append((path, old))

    def _look_at(self, path: str) -> None:
        full = os.path.join(self.root, path)
        try:
            info = os.lstat(full)
        except OSError:
            self._note(path, (None, None))
            return
        if stat.S_ISDIR(info.st_mode):  # a directory now: its files have events of their own
            self._note(path, (None, None))
            return
        self._note(path, (_stamp(info, time.time_ns()), file_digest(Path(full))))

    def _walk(self) -> None:
        """Look at every file: one `lstat` each (`os.scandir`, plain strings, no `Path` per
        file), reading only the files whose stamp changed."""
        seen: set[str] = set()
        started = time.time_ns()
        todo = [(self.root, "")]
        cut = False  # past MAX_WALKED_FILES: what was not reached is not taken for deleted
        while todo and not cut:
            directory, prefix = todo.pop()
            try:
                entries = list(os.scandir(directory))
            except OSError:
                continue
            for entry in entries:
                key = prefix + entry.name
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if walked_dir(key):
                            todo.append((entry.path, key + "/"))
                        continue
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if not prefix and is_ours(key):
                    continue
                seen.add(key)
                stamp = _stamp(info, started)
                known = self._known.get(key)
                if known is None or stamp is None or known[0] != stamp:
                    self._note(key, (stamp, file_digest(Path(entry.path))))
                if len(seen) >= MAX_WALKED_FILES:
                    cut = True
                    break
        if not cut:
            for path in [path for path in self._known if path not in seen]:
                self._note(path, (None, None))


def _stamp(info: os.stat_result, taken_ns: int) -> Stamp | None:
    """The file's stamp; None (read it again next time) when it was modified too close to
    `taken_ns` (or after it) for the stamp to tell a later same-size rewrite apart."""
    if info.st_mtime_ns >= taken_ns - RACY_NS:
        return None
    return info.st_size, info.st_mtime_ns, info.st_ino


class TreeLedgers:
    """The run's ledgers, one per tree (made at the first feature that needs it)."""

    def __init__(self, *, use_inotify: bool = True) -> None:
        self.use_inotify = use_inotify
        self._ledgers: dict[str, TreeLedger] = {}
        self._lock = threading.Lock()

    def of(self, root: Path) -> TreeLedger:
        with self._lock:
            key = str(root)
            if key not in self._ledgers:
                self._ledgers[key] = TreeLedger(root, use_inotify=self.use_inotify)
            return self._ledgers[key]


class ChangeWatch:
    """The files changed in `workspace` since the watch began (see the module's docstring).

    `by_git`: the project commits a checkpoint per feature (git finds the change); else the
    tree's ledger does, from the run's `trees`."""

    def __init__(self, workspace: Path, *, by_git: bool, trees: TreeLedgers) -> None:
        self.workspace, self.git = workspace, by_git
        self.ledger = None if by_git else trees.of(workspace)
        self.start = self.ledger.refresh() if self.ledger is not None else 0

    def changed(self) -> list[str]:
        """Changed, added or deleted files, relative to the workspace, sorted."""
        if self.ledger is None:
            try:
                return changed_since_head(self.workspace)
            except CheckpointError:
                return []
        self.ledger.refresh()
        return self.ledger.changed_since(self.start)


def footprint(changed: list[str], check_files: list[str], earlier: Footprint | None = None) -> Footprint:
    """The footprint of a pass; a rebuilt feature keeps what its earlier pass touched too."""
    before = earlier.changed if earlier else []
    return Footprint(changed=sorted({*changed, *before}), check=sorted(set(check_files)))
