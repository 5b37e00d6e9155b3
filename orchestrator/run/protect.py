"""Keeping a feature's check honest: which files are its check, and whether the agent changed them.

The protected files of a feature are the project files its `verify` command names (a test
file, a test directory's files, a script) plus whatever its `protected` globs match. The
editor refuses to change them; anything else the agent does (bash) is caught by comparing
SHA-256 hashes taken before the attempt with hashes taken before the check runs.

Directories named by the command are expanded to their files, except the project root
itself and directories a command only changes into (`cd src && make test`), which would
protect the code the agent is meant to write. Caches that running a check rewrites
(`__pycache__`, `.pytest_cache`, `.hypothesis`), and `.git/` and `.autonomous/`, are never
protected; neither are files a command writes (`> out.txt`).

Only what existed before the feature's first attempt is the check: the run loop records
`check_file_keys` in the feature's state at that first attempt, before the agent runs, and
passes them to `take_guard` at every attempt (after a kill and resume too). A file the agent
itself created (an output the check reads: `grep -q ok out.txt`) stays its to fix.
`protected` globs are matched again at every attempt.

`take_guard` / `guard_changes` / `restore` are what the run loop uses around one attempt:
the hashes and a copy of every protected file before, what differs after (a file matching
a `protected` glob that did not exist before counts too: `protected: ["**/conftest.py"]`
forbids adding one), and putting the originals back, whatever the agent left in their
place (a symlink, a directory, a deleted parent), so the next attempt meets the real check.
A change that cannot be undone is carried into the next attempt's comparison, so the
feature cannot pass on a check the agent replaced.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import stat
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

MISSING = "<missing>"
NOT_A_FILE = "<not a file>"
# Options whose argument is a directory to work in, not a check file.
_DIRECTORY_OPTIONS = {"cd", "pushd", "-C", "--cwd", "--prefix", "--rootdir", "--directory", "--chdir"}
# Never protected: the orchestrator's and git's own files, and caches a check run rewrites.
_SKIP_DIRS = {
    ".autonomous", ".git", "__pycache__", "node_modules", ".pytest_cache", ".mypy_cache", ".ruff_cache",
    ".hypothesis", ".tox", ".venv", "venv",
}
_SKIP_SUFFIXES = (".pyc", ".pyo")
_GLOB_CHARS = set("*?[")
# A verify command naming a huge tree would make every attempt hash it twice; cap the set.
MAX_PROTECTED_FILES = 5000
# Bytes of protected files copied before an attempt, to put them back after it.
COPY_LIMIT = 4 * 1024 * 1024


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
    return [_key(path, root) for path in protected_files(root, verify_command, [])]


def snapshot(paths: Iterable[Path], project_root: Path | None = None) -> dict[str, str]:
    """Path -> SHA-256 of its content ('<missing>' if absent). Keys are relative to `project_root` if given."""
    root = project_root.resolve() if project_root is not None else None
    return {_key(Path(path), root): file_hash(Path(path)) for path in paths}


def changed_files(project_root: Path, before: dict[str, str]) -> list[str]:
    """The paths of `before` whose content differs now (edited, deleted, created), relative to the root."""
    root = project_root.resolve()
    changed = []
    for key, digest in before.items():
        path = Path(key) if os.path.isabs(key) else root / key
        if file_hash(path) != digest:
            changed.append(_key(path, root))
    return sorted(changed)


def file_hash(path: Path) -> str:
    """SHA-256 of the file's bytes, '<missing>' if it does not exist, '<not a file>' otherwise."""
    try:
        if not path.is_file():
            return MISSING if not path.exists() and not path.is_symlink() else NOT_A_FILE
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()
    except OSError as err:
        # Unreadable now counts as changed: the check cannot be trusted.
        return f"<unreadable: {err.strerror or type(err).__name__}>"


def _command_paths(command: str) -> list[str]:
    """Words of the command that could be paths, relative to the project root.

    Options, `cd` targets and output files are left out; words after `cd dir` are taken
    relative to `dir`, as the shell would.
    """
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        words = command.split()  # unbalanced quotes: the words are still worth a look
    paths = []
    previous = ""
    base = ""
    for word in words:
        skip = previous in _DIRECTORY_OPTIONS or _is_output_redirect(previous)
        if previous in ("cd", "pushd") and _split_shell_operators(word):
            base = os.path.join(base, _split_shell_operators(word)[0])
        previous = word
        if skip or _is_output_redirect(word):
            continue
        if word.startswith("-"):
            # `--file=tests/x.py` style: the value may be a path (unless it is a directory option).
            option, _, value = word.partition("=")
            if value and option not in _DIRECTORY_OPTIONS:
                paths.append(os.path.join(base, value))
            continue
        for part in _split_shell_operators(word):
            # pytest node ids: tests/test_x.py::TestY::test_z names tests/test_x.py.
            paths.append(os.path.join(base, part.split("::", 1)[0]))
    return [p for p in paths if p]


def _is_output_redirect(word: str) -> bool:
    # `> out.txt`, `2>err.log`, `&>all.log`: a file the check writes, not one it reads.
    return word.lstrip("0123456789&").startswith(">")


def _split_shell_operators(word: str) -> list[str]:
    for operator in ("&&", "||", ";", "|"):
        word = word.replace(operator, " ")
    return word.split()


def _expand(root: Path, token: str) -> list[Path]:
    if "\x00" in token or len(token) > 4096:
        return []
    if _GLOB_CHARS & set(token):
        return _glob(root, token)
    candidate = Path(token) if os.path.isabs(token) else root / token
    try:
        resolved = candidate.resolve()
    except (OSError, RuntimeError, ValueError):
        return []
    if not _inside(resolved, root) or resolved == root:
        return []
    files = _files_at(resolved, root)
    # A check file that is a symlink is protected twice: its target's content, and the link
    # itself (hashing through the link notices it being pointed elsewhere).
    link = Path(os.path.normpath(candidate))
    if files and link != resolved and link.is_symlink() and _inside(link, root):
        files.append(link)
    return files


def _glob(root: Path, pattern: str) -> list[Path]:
    files: list[Path] = []
    for match in _glob_matches(root, pattern):
        try:
            resolved = match.resolve()
        except (OSError, RuntimeError):
            continue
        if _inside(resolved, root) and resolved != root:
            files.extend(_files_at(resolved, root))
    return files


def _glob_matches(root: Path, pattern: str) -> list[Path]:
    """What `pattern` matches under `root`, unresolved; nothing for an absolute or odd pattern."""
    if not pattern or "\x00" in pattern or os.path.isabs(pattern):
        return []
    try:
        return list(root.glob(pattern))
    except (ValueError, NotImplementedError, OSError):
        return []


def _files_at(path: Path, root: Path) -> list[Path]:
    """`path` itself if it is a file, the files below it if it is a directory; never caches."""
    relative_parts = path.relative_to(root).parts
    if path.is_file():
        if path.name.endswith(_SKIP_SUFFIXES) or any(p in _SKIP_DIRS for p in relative_parts[:-1]):
            return []
        return [path]
    if path.is_dir() and not any(p in _SKIP_DIRS for p in relative_parts):
        return _files_under(path, root)
    return []


def _files_under(directory: Path, root: Path) -> list[Path]:
    files = []
    for current, dirs, names in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
        for name in sorted(names):
            path = Path(current) / name
            if name.endswith(_SKIP_SUFFIXES) or path.is_symlink():
                continue
            files.append(path)
            if len(files) >= MAX_PROTECTED_FILES:
                return files
    return [f for f in files if _inside(f, root)]


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _key(path: Path, root: Path | None) -> str:
    if root is not None:
        try:
            return path.relative_to(root).as_posix()
        except ValueError:
            pass
    return str(path)


# ---- one attempt: baseline, changes, restore ----------------------------------------------


@dataclass
class Guard:
    """The protected files of one attempt as they were before the agent ran."""

    root: Path
    files: list[Path]
    """Resolved protected files (what the editor refuses to change)."""
    hashes: dict[str, str]
    """Key (path relative to the root) -> hash before the attempt, as `snapshot`."""
    copies: dict[str, tuple[bytes, int] | None] = field(default_factory=dict)
    """Key -> (content, mode) to restore; None when the file did not exist. Absent: too big to keep."""
    globs: tuple[str, ...] = ()
    unrestored: dict[str, str] = field(default_factory=dict)
    """After `restore`: key -> original hash of every change that could not be undone."""


def take_guard(
    project_root: Path, verify_command: str | None, globs: Sequence[str], *, carried: Guard | None = None,
    copy_limit: int = COPY_LIMIT, check_files: Sequence[Path] | None = None,
) -> Guard:
    """Hash and copy the protected files before an attempt.

    `check_files` are the files the check names as recorded at the feature's first attempt
    (`check_file_keys`, joined to the root); when None, those that exist now.
    `carried` is the previous attempt's guard: changes it could not undo keep their original
    hashes here, so the agent's version of a check is never taken as the new baseline.
    """
    root = project_root.resolve()
    if check_files is None:
        files = protected_files(root, verify_command, globs)
    else:
        found = dict.fromkeys([*check_files, *protected_files(root, None, globs)])
        files = sorted(found)[:MAX_PROTECTED_FILES]
    hashes = snapshot(files, root)
    copies: dict[str, tuple[bytes, int] | None] = {}
    budget = copy_limit
    for key in hashes:
        path = root / key
        try:
            if not path.is_file():
                continue
            size = path.stat().st_size
            if size > budget:
                continue
            copies[key] = (path.read_bytes(), stat.S_IMODE(path.stat().st_mode))
            budget -= size
        except OSError:
            continue
    if carried is not None:
        for key, digest in carried.unrestored.items():
            hashes[key] = digest
            copies.pop(key, None)
    return Guard(root, files, hashes, copies, tuple(globs))


def guard_changes(guard: Guard) -> list[str]:
    """Keys of protected files changed, deleted or replaced, and of new files matching a protected glob."""
    changed = set(changed_files(guard.root, guard.hashes))
    known = set(guard.hashes)
    for pattern in guard.globs:
        for path in _glob_entries(guard.root, pattern):
            key = path.relative_to(guard.root).as_posix()
            if key not in known:
                changed.add(key)
    return sorted(changed)


def restore(guard: Guard, changed: Sequence[str]) -> list[str]:
    """Put back the files of `changed` as they were (new ones are removed); the keys that could not be."""
    failed = []
    for key in changed:
        if key in guard.copies:
            original = guard.copies[key]
        elif key not in guard.hashes:
            original = None  # a new file matching a protected glob
        else:
            failed.append(key)  # too big to have been copied
            continue
        if not _put_back(guard.root, key, original):
            failed.append(key)
    guard.unrestored = {key: guard.hashes.get(key, MISSING) for key in failed}
    return failed


def _put_back(root: Path, key: str, original: tuple[bytes, int] | None) -> bool:
    """Make `root/key` a regular file with `original` (or absent); never write outside `root`."""
    parts = Path(key).parts
    if not parts or os.path.isabs(key) or ".." in parts or parts[0] in (".autonomous", ".git"):
        return False
    try:
        directory = root
        for part in parts[:-1]:
            directory = directory / part
            if directory.is_symlink() or (directory.exists() and not directory.is_dir()):
                if original is None:
                    return True  # the file cannot be there: nothing to remove
                directory.unlink()  # a link or a file where a directory was: not the check's
            if not directory.exists():
                if original is None:
                    return True
                directory.mkdir()
        path = directory / parts[-1]
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)  # the agent's directory where a protected file belongs
        if original is None:
            if path.is_symlink() or path.exists():
                path.unlink()
            return True
        content, mode = original
        fd, tmp = tempfile.mkstemp(prefix=f".{parts[-1]}.", suffix=".restore", dir=directory)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(content)
                os.fchmod(handle.fileno(), mode)
            # Replaces a symlink itself rather than writing through it.
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        return file_hash(path) == hashlib.sha256(content).hexdigest()
    except OSError:
        return False


def _glob_entries(root: Path, pattern: str) -> list[Path]:
    """Files and links matching `pattern` under `root`, as found (links not resolved), skipping caches."""
    found = []
    for match in _glob_matches(root, pattern)[:MAX_PROTECTED_FILES]:
        try:
            relative = match.relative_to(root)
        except ValueError:
            continue
        if ".." in relative.parts or any(p in _SKIP_DIRS for p in relative.parts[:-1]):
            continue
        if match.name.endswith(_SKIP_SUFFIXES):
            continue
        if match.is_symlink() or match.is_file():
            found.append(match)
    return found
