"""A feature's footprint: the files its work changed plus the files its check names.

`ChangeWatch` finds the files a feature changed. In a git project they are the files that
differ from HEAD (the last checkpoint; failed work has left the tree), which is exactly what
the feature's checkpoint will commit. Without git, a snapshot of every file's size and
modification time taken when the feature starts is compared with the tree.
"""

from __future__ import annotations

import os
from pathlib import Path

from orchestrator.run.checkpoint import is_git_repo
from orchestrator.run.git_safety import CheckpointError
from orchestrator.run.tree_git import changed_since_head, is_ours
from orchestrator.store.records import Footprint

# Directories never walked without git: tools' caches and environments, not the project's work.
_SKIPPED_DIRS = frozenset({".git", "__pycache__", "node_modules", ".venv", ".mypy_cache", ".pytest_cache"})
MAX_WALKED_FILES = 200_000  # a tree bigger than this is not snapshotted file by file

Stamp = tuple[int, int]


class ChangeWatch:
    """The files changed in `workspace` since the watch began (see the module's docstring)."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.git = is_git_repo(workspace)
        self.before = {} if self.git else _stamps(workspace)

    def changed(self) -> list[str]:
        """Changed, added or deleted files, relative to the workspace, sorted."""
        if self.git:
            try:
                return changed_since_head(self.workspace)
            except CheckpointError:
                return []
        after = _stamps(self.workspace)
        keys = set(self.before) | set(after)
        return sorted(key for key in keys if self.before.get(key) != after.get(key))


def footprint(changed: list[str], check_files: list[str], earlier: Footprint | None = None) -> Footprint:
    """The footprint of a pass; a rebuilt feature keeps what its earlier pass touched too."""
    before = earlier.changed if earlier else []
    return Footprint(changed=sorted({*changed, *before}), check=sorted(set(check_files)))


def _stamps(root: Path) -> dict[str, Stamp]:
    found: dict[str, Stamp] = {}
    for current, dirs, files in os.walk(root):
        dirs[:] = [name for name in dirs if name not in _SKIPPED_DIRS]
        here = Path(current)
        for name in files:
            key = (here / name).relative_to(root).as_posix()
            if is_ours(key):
                continue
            try:
                info = (here / name).lstat()
            except OSError:
                continue
            found[key] = (info.st_size, info.st_mtime_ns)
            if len(found) >= MAX_WALKED_FILES:
                return found
        if here == root:
            dirs[:] = [name for name in dirs if not is_ours(name)]
    return found
