"""Where a check command's pytest looks: the paths it names, whether it runs the whole tree,
and the directories on the way to them (`influence_snapshot` hashes what may sway the check
there). Read from the command as written, so a snapshot before an attempt and one after it
look in the same places.
"""

from __future__ import annotations

import os
from pathlib import Path

from orchestrator.run.checks.shell_words import is_dir, path_here

# Never looked into: the orchestrator's and git's files, caches, environments and dependencies.
SKIP_DIRS = {
    ".autonomous", ".git", "__pycache__", "node_modules", ".pytest_cache", ".mypy_cache", ".ruff_cache",
    ".hypothesis", ".tox", ".nox", ".venv", "venv", "site-packages",
}


def named_paths(root: Path, words: list[str]) -> list[Path]:
    """Paths inside `root` that the command's `words` may name, whether or not they exist yet.

    Read as written, not as found on disk, so that the snapshots before and after an attempt
    look in the same places even when the attempt creates the file a check names. A word that
    is no path (`python3`, `true`) names a missing file in the root, which adds nothing.
    """
    found: dict[Path, None] = {}
    for token in words:
        if token.startswith("-"):
            token = token.partition("=")[2]  # --rootdir=tests, --config-file=x.ini
        path = path_here(root, token.split("::", 1)[0])  # pytest node ids: tests/test_x.py::test_one
        if path is not None:
            found.setdefault(path, None)
    return list(found)


# pytest's options whose value is the next word (`-k expr`), so that word names no test path.
_PYTEST_VALUE_OPTIONS = {
    "-k", "-m", "-p", "-c", "-o", "-W", "--rootdir", "--confcutdir", "--deselect", "--ignore", "--ignore-glob",
    "--maxfail", "--junitxml", "--junit-xml", "--basetemp", "--import-mode", "--tb", "--durations", "-n",
    "--override-ini", "--config-file", "--log-level", "--cov",
}


def runs_whole_tree(words: list[str]) -> bool:
    """True for tox, nox and make (which name no test path) and for pytest given no path to test."""
    for index, word in enumerate(words):
        name = os.path.basename(word)
        if name in ("tox", "nox", "make"):
            return True
        if name in ("pytest", "py.test"):
            rest = words[index + 1:]
            positional = [w for prev, w in zip([name, *rest], rest, strict=False)
                          if not w.startswith("-") and prev not in _PYTEST_VALUE_OPTIONS]
            return not positional
    return False


def directories_on_path(root: Path, named: list[Path]) -> list[Path]:
    """The root, every named directory and the directory of every named file, and their parents up to the root.

    Only existing directories inside the project (links followed) are kept.
    """
    found: dict[Path, None] = {root: None}
    for path in named:
        directory = path if is_dir(path) else path.parent
        while directory != root and directory.is_relative_to(root):
            if not skipped(directory, root):
                found.setdefault(directory, None)
            directory = directory.parent
    return sorted(d for d in found if d == root or (is_dir(d) and really_inside(d, root)))


def really_inside(path: Path, root: Path) -> bool:
    """Whether `path`, links followed, is `root` or lies inside it."""
    try:
        real = path.resolve()
    except (OSError, RuntimeError):
        return False
    return real.is_relative_to(root)


def skipped(directory: Path, root: Path) -> bool:
    """Whether `directory` is never looked into (`SKIP_DIRS` on its way from `root`, or outside it)."""
    try:
        return any(part in SKIP_DIRS for part in directory.relative_to(root).parts)
    except ValueError:
        return True


def is_directory(entry: os.DirEntry[str]) -> bool:
    """Whether a directory listing's entry is a directory itself (a link to one is not)."""
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False
