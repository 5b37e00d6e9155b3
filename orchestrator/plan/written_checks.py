"""The check files `orchestrate plan` writes into the project, kept track of so they can be undone.

A check file's path must stay inside the project, out of `.autonomous/` and `.git/`, and may
not replace a file the project already had: planning never overwrites the user's work. What
a feature's earlier, rejected check wrote is removed when its rewrite lands elsewhere, and
`rollback` removes everything when the plan stops before its spec is written.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from orchestrator.store.disk.atomic import write_report_atomic

_FORBIDDEN_TOP = frozenset({".git", ".autonomous"})


class WrittenCheckFiles:
    """The files written so far, per feature."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.by_feature: dict[str, list[str]] = {}

    def owned(self) -> set[str]:
        return {path for paths in self.by_feature.values() for path in paths}

    def problems(self, feature_id: str, paths: list[str]) -> list[str]:
        """Why these paths cannot be written for `feature_id` (empty when they can)."""
        found = []
        others = self.owned() - set(self.by_feature.get(feature_id, []))
        for path in paths:
            reason = self._path_problem(path, others)
            if reason:
                found.append(f"{path!r}: {reason}")
        if len(set(paths)) != len(paths):
            found.append("the same path is given twice")
        return found

    def _path_problem(self, path: str, others: set[str]) -> str | None:
        pure = PurePosixPath(path)
        if not path.strip() or pure.is_absolute() or ".." in pure.parts or "\\" in path or "\x00" in path:
            return "give a relative path inside the project, without '..'"
        if pure.parts[0] in _FORBIDDEN_TOP or pure.parts[0].startswith(".autonomous"):
            return f"{pure.parts[0]}/ is not the project's to hold checks"
        target = self.root / pure
        if not target.resolve().is_relative_to(self.root.resolve()):
            return "leads out of the project (a symbolic link)"
        if path in others:
            return "is another feature's check file; use a file of this feature's own"
        if (target.exists() or target.is_symlink()) and path not in self.owned():
            return "already exists in the project; checks never replace project files (choose a new file)"
        return None

    def replace(self, feature_id: str, files: dict[str, str]) -> None:
        """Write `files` (path -> content) as `feature_id`'s check, removing its earlier files."""
        for stale in set(self.by_feature.get(feature_id, [])) - set(files):
            self._remove(stale)
        self.by_feature[feature_id] = list(files)
        for path, content in files.items():
            target = self.root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            write_report_atomic(target, content)  # a project file: the umask's mode, not the state's 0600

    def rollback(self) -> None:
        """Remove every file written (the plan stopped before its spec was written)."""
        for path in sorted(self.owned()):
            self._remove(path)
        self.by_feature.clear()

    def _remove(self, path: str) -> None:
        try:
            (self.root / path).unlink()
        except FileNotFoundError:
            pass
