"""Which files are a feature's check, and so protected (see `protect`).

The protected files of a feature are the project files its `verify` command names (a test
file, a test directory's files, a script) plus whatever its `protected` globs match. The
editor refuses to change them; `protect` notices and undoes whatever else changed them.

Directories named by the command are expanded to their files, except the project root
itself and directories a command only changes into (`cd src && make test`), which would
protect the code the agent is meant to write. Caches that running a check rewrites
(`__pycache__`, `.pytest_cache`, `.hypothesis`), and `.git/` and `.autonomous/`, are never
protected; neither are files a command writes (`> out.txt`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from orchestrator.run.checks.shell_words import (
    can_name_a_path,
    is_dir,
    is_file,
    is_operator,
    is_output_redirect,
    shell_words,
)

# Options whose argument is a directory to work in, not a check file.
_DIRECTORY_OPTIONS = {"cd", "pushd", "-C", "--cwd", "--prefix", "--rootdir", "--directory", "--chdir"}
# Never protected: the orchestrator's and git's own files, and caches a check run rewrites.
SKIP_DIRS = {
    ".autonomous", ".git", "__pycache__", "node_modules", ".pytest_cache", ".mypy_cache", ".ruff_cache",
    ".hypothesis", ".tox", ".venv", "venv",
}
SKIP_SUFFIXES = (".pyc", ".pyo")
_GLOB_CHARS = set("*?[")
# A verify command naming a huge tree would make every attempt hash it twice; cap the set.
MAX_PROTECTED_FILES = 5000


def protected_files(project_root: Path, verify_command: str | None, globs: Sequence[str]) -> list[Path]:
    """Resolved paths of the files inside `project_root` that the command names or `globs` match."""
    root = project_root.resolve()
    found: dict[Path, None] = {}
    for token in _command_paths(verify_command or ""):
        for path in _expand(root, token):
            found.setdefault(path, None)
    for pattern in globs:
        for path in _glob(root, pattern):
            found.setdefault(path, None)
    return sorted(found)[:MAX_PROTECTED_FILES]


def check_file_keys(project_root: Path, verify_command: str | None) -> list[str]:
    """The files `verify_command` names that exist now, relative to the root: what a feature
    records at its first attempt, and protects from then on (see `take_guard`)."""
    root = project_root.resolve()
    return [key_of(path, root) for path in protected_files(root, verify_command, [])]


def named_words(command: str) -> list[str]:
    """The words of `command` that may name files it reads, relative to the project root (a
    `cd dir` applied): what `outside_reads` looks at outside the project."""
    return _command_paths(command)


def _command_paths(command: str) -> list[str]:
    """Words of the command that could be paths, relative to the project root.

    Options, `cd` targets and output files are left out; words after `cd dir` are taken
    relative to `dir`, as the shell would.
    """
    paths = []
    previous = ""
    base = ""
    # A quoted script (`bash -c 'pytest tests/x.py'`) is read as the commands it holds.
    words = [inner for word in shell_words(command) for inner in (shell_words(word) if " " in word else [word])]
    for word in words:
        skip = previous in _DIRECTORY_OPTIONS or is_output_redirect(previous)
        if previous in ("cd", "pushd") and not is_operator(word):
            base = os.path.join(base, word)
        previous = word
        if skip or is_operator(word):
            continue
        if word.startswith("-"):
            # `--file=tests/x.py` style: the value may be a path (unless it is a directory option).
            option, _, value = word.partition("=")
            if value and option not in _DIRECTORY_OPTIONS:
                paths.append(os.path.join(base, value))
            continue
        # pytest node ids: tests/test_x.py::TestY::test_z names tests/test_x.py.
        paths.append(os.path.join(base, word.split("::", 1)[0]))
    return [p for p in paths if p]


def _expand(root: Path, token: str) -> list[Path]:
    if not can_name_a_path(token):
        return []
    if _GLOB_CHARS & set(token):
        return _glob(root, token)
    candidate = Path(token) if os.path.isabs(token) else root / token
    if not can_name_a_path(str(candidate)):
        return []
    try:
        resolved = candidate.resolve()
    except (OSError, RuntimeError, ValueError):
        return []
    if not inside(resolved, root) or resolved == root:
        return []
    files = _files_at(resolved, root)
    # A check file that is a symlink is protected twice: its target's content, and the link
    # itself (hashing through the link notices it being pointed elsewhere).
    link = Path(os.path.normpath(candidate))
    if files and link != resolved and link.is_symlink() and inside(link, root):
        files.append(link)
    return files


def _glob(root: Path, pattern: str) -> list[Path]:
    files: list[Path] = []
    for match in glob_matches(root, pattern):
        try:
            resolved = match.resolve()
        except (OSError, RuntimeError):
            continue
        if inside(resolved, root) and resolved != root:
            files.extend(_files_at(resolved, root))
    return files


def glob_matches(root: Path, pattern: str) -> list[Path]:
    """What `pattern` matches under `root`, unresolved; nothing for an absolute or odd pattern."""
    if not can_name_a_path(pattern) or os.path.isabs(pattern):
        return []
    try:
        return list(root.glob(pattern))
    except (ValueError, NotImplementedError, OSError, RecursionError):
        # Python's glob recurses once per part: hundreds of parts (no real path has them) would
        # end the run, so such a pattern names nothing, as an odd one does.
        return []


def _files_at(path: Path, root: Path) -> list[Path]:
    """`path` itself if it is a file, the files below it if it is a directory; never caches."""
    relative_parts = path.relative_to(root).parts
    if is_file(path):
        if path.name.endswith(SKIP_SUFFIXES) or any(p in SKIP_DIRS for p in relative_parts[:-1]):
            return []
        return [path]
    if is_dir(path) and not any(p in SKIP_DIRS for p in relative_parts):
        return _files_under(path, root)
    return []


def _files_under(directory: Path, root: Path) -> list[Path]:
    files = []
    for current, dirs, names in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in sorted(names):
            path = Path(current) / name
            if name.endswith(SKIP_SUFFIXES) or path.is_symlink():
                continue
            files.append(path)
            if len(files) >= MAX_PROTECTED_FILES:
                return files
    return [f for f in files if inside(f, root)]


def inside(path: Path, root: Path) -> bool:
    # Not `root in path.parents`: that builds every parent, quadratic along a walk up a deep path.
    return path.is_relative_to(root)


def key_of(path: Path, root: Path | None) -> str:
    if root is not None:
        try:
            return path.relative_to(root).as_posix()
        except ValueError:
            pass
    return str(path)
