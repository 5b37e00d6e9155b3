"""Keeping a feature's check honest: whether the agent changed the files of its check, and undoing it.

Which files those are is `check_files`' part: the project files a feature's `verify` command
names plus whatever its `protected` globs match. The editor refuses to change them; anything
else the agent does (bash) is caught here by comparing SHA-256 hashes taken before the attempt
with hashes taken before the check runs.

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

The project's `orchestrate.toml` is guarded in every attempt too, whatever the check names, and
around every check (`orchestrator.run.checks.running.check_command.run_check`): it sets the next run's sandbox,
limits and prices. One the agent creates where there was none is removed.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.run.checks.protection.check_paths import (
    MAX_PROTECTED_FILES,
    SKIP_DIRS,
    SKIP_SUFFIXES,
    glob_matches,
    key_of,
    protected_files,
)
from orchestrator.store.disk.paths import RUN_CONFIG_NAME

MISSING = "<missing>"
NOT_A_FILE = "<not a file>"
# Bytes of protected files copied before an attempt, to put them back after it.
COPY_LIMIT = 4 * 1024 * 1024
# What a verification that undid the agent's change to a protected file says refused the attempt.
REFUSED_BY = "the protected-files guard"


def snapshot(paths: Iterable[Path], project_root: Path | None = None) -> dict[str, str]:
    """Path -> SHA-256 of its content ('<missing>' if absent). Keys are relative to `project_root` if given."""
    root = project_root.resolve() if project_root is not None else None
    return {key_of(Path(path), root): file_hash(Path(path)) for path in paths}


def changed_files(project_root: Path, before: dict[str, str]) -> list[str]:
    """The paths of `before` whose content differs now (edited, deleted, created), relative to the root."""
    root = project_root.resolve()
    changed = []
    for key, digest in before.items():
        path = Path(key) if os.path.isabs(key) else root / key
        if file_hash(path) != digest:
            changed.append(key_of(path, root))
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
    # The run's configuration is guarded in every attempt, whatever the check names: written by the
    # agent (without a sandbox) it would set the next run's sandbox, limits and prices.
    files = [*files, root / RUN_CONFIG_NAME] if root / RUN_CONFIG_NAME not in files else files
    hashes = snapshot(files, root)
    copies: dict[str, tuple[bytes, int] | None] = {}
    budget = copy_limit
    for key in hashes:
        path = root / key
        try:
            if not path.is_file():
                if key == RUN_CONFIG_NAME and hashes[key] == MISSING:
                    copies[key] = None  # absent before: one the agent creates is removed
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


def named(changed: Sequence[str]) -> str:
    """The changed keys for a reason the user reads: the run's configuration said to be one."""
    return ", ".join(f"{key} (the run's configuration)" if key == RUN_CONFIG_NAME else key for key in changed)


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
    for match in glob_matches(root, pattern)[:MAX_PROTECTED_FILES]:
        try:
            relative = match.relative_to(root)
        except ValueError:
            continue
        if ".." in relative.parts or any(p in SKIP_DIRS for p in relative.parts[:-1]):
            continue
        if match.name.endswith(SKIP_SUFFIXES):
            continue
        if match.is_symlink() or match.is_file():
            found.append(match)
    return found
