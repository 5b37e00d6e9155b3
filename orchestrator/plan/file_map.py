"""A compact map of an existing project's files, for the planner and the check writer.

The model plans against what is there: the paths (with sizes) of the project's files,
directories first, leaving out what no feature is about (VCS data, caches, virtualenvs,
`.autonomous/`). Bounded, so a huge tree costs a known number of tokens.
"""

from __future__ import annotations

import os
from pathlib import Path

SKIP_DIRS = frozenset({
    ".git", ".hg", ".svn", ".autonomous", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache",
    "node_modules", ".venv", "venv", ".tox", "dist", "build", ".idea", ".vscode",
})
MAX_ENTRIES = 200


def project_file_map(root: Path, limit: int = MAX_ENTRIES, leave_out: tuple[Path, ...] = ()) -> str:
    """One line per file (`path (N bytes)`), sorted, at most `limit`; "" for an empty project.

    `leave_out`: files that are not the project (the description, the spec being written).
    """
    if not root.is_dir():
        return ""
    skipped = {path.resolve() for path in leave_out}
    found: list[str] = []
    total = 0
    for current, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith(".autonomous"))
        here = Path(current)
        for name in sorted(files):
            path = here / name
            if path.resolve() in skipped:
                continue
            total += 1
            if len(found) >= limit:
                continue
            try:
                size = path.lstat().st_size
            except OSError:
                continue
            found.append(f"{path.relative_to(root).as_posix()} ({size} bytes)")
    if total > len(found):
        found.append(f"... and {total - len(found)} more files")
    return "\n".join(found)
