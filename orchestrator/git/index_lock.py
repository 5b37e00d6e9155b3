"""A `.git/index.lock` left behind by a git that was killed while it held it.

A git killed mid-commit (kill -9, a reboot) leaves the lock behind, and every later git
command that writes the index fails on it. It is removed at the start of a run and before
each checkpoint once no running process has it open, with a warning.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

from orchestrator.git.run_git import CheckpointError, run_git

# How long a checkpoint waits for another git to let go of .git/index.lock, and how long a
# lock must go unopened to count as stale (git closes it a moment before renaming it).
_LOCK_WAIT = 30.0
_LOCK_QUIET = 0.3


def clear_stale_index_lock(project_root: Path, on_warning: Callable[[str], None] | None = None) -> bool:
    """Remove the repository's `index.lock` if no running process holds it; True if removed.

    A git killed mid-commit (kill -9, a reboot) leaves the lock behind, and every later git
    command that writes the index fails on it. A lock that a process has open is waited for
    (up to `_LOCK_WAIT` seconds) and never removed; one that nobody has had open for
    `_LOCK_QUIET` seconds is stale. Where processes cannot be inspected (no /proc), nothing is
    removed. Never raises: git's own error says the rest.
    """
    try:
        found = run_git(project_root, "rev-parse", "--git-path", "index.lock")
    except CheckpointError:
        return False
    if found.returncode != 0 or not found.stdout.strip():
        return False
    lock = project_root / found.stdout.strip()
    deadline = time.monotonic() + _LOCK_WAIT
    unused_since: float | None = None
    while True:
        try:
            seen = os.lstat(lock)
        except OSError:
            return False  # no lock (any more)
        held = _lock_in_use(lock)
        now = time.monotonic()
        if held is None or (held and now >= deadline):
            return False
        if held:
            unused_since = None
        elif unused_since is None:
            unused_since = now
        elif now - unused_since >= _LOCK_QUIET:
            break
        time.sleep(0.05)
    try:
        # The very lock we looked at, not a new one that a git took in the meantime.
        current = os.lstat(lock)
        if (current.st_ino, current.st_mtime_ns) != (seen.st_ino, seen.st_mtime_ns):
            return False
        lock.unlink()
    except OSError:
        return False
    (on_warning or _warn_on_stderr)(
        f"removed {lock}, left behind by a git command that was killed while it held it "
        "(no process has it open now)"
    )
    return True


def _lock_in_use(lock: Path) -> bool | None:
    """Whether a running process has `lock` open; None where processes cannot be inspected.

    A git whose open files we may not see (another user's) counts as holding it.
    """
    try:
        entries = os.listdir("/proc")
    except OSError:
        return None
    # As /proc shows an open file: the real directory, the name as it is.
    lock_path = os.path.join(os.path.realpath(lock.parent), lock.name)
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            fds = os.listdir(f"/proc/{entry}/fd")
        except PermissionError:
            if _command_name(entry).startswith("git"):
                return True
            continue
        except OSError:
            continue  # it exited while we looked
        if any(_readlink(f"/proc/{entry}/fd/{fd}") == lock_path for fd in fds):
            return True
    return False


def _command_name(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as handle:
            return handle.read().strip()
    except OSError:
        return ""


def _readlink(path: str) -> str | None:
    try:
        return os.readlink(path)
    except OSError:
        return None


def _warn_on_stderr(message: str) -> None:
    print(f"orchestrate: warning: {message}", file=sys.stderr)
