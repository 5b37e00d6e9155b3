"""Where the Context Agent keeps its files, and crash-safe writing to them.

`ContextFiles` names every file of the agent's store directory (the one place that knows
them: the orchestrator's `ProjectPaths` takes them from here) and writes there:

- an atomic write goes to a temporary file in the same directory, is flushed and fsynced,
  then renamed over the target, and the directory is fsynced, so a kill at any instant
  leaves either the old or the new file, never a torn one;
- no write follows a symbolic link below `guard_root`: a link in place of a file is
  replaced, a linked directory is refused (`LinkRefused`);
- every text written passes through `redact` (the orchestrator passes its secret redaction);
- a damaged file is set aside into `backups_dir`, never deleted.

The functions below are the primitives; the orchestrator's own atomic writes may reuse them.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

# Where a Context Agent given a project root keeps its stores, below the project's state directory.
PROJECT_STATE_DIR = ".autonomous"
CONTEXT_DIR_NAME = "context"
BACKUPS_DIR_NAME = "backups"


class LinkRefused(OSError):
    """A path leads through a symbolic link: writing there could land outside the project."""


def _as_is(text: str) -> str:
    return text


@dataclass(frozen=True)
class ContextFiles:
    """The Context Agent's store directory, and how it writes there."""

    directory: Path
    backups_dir: Path
    guard_root: Path
    """Writes refuse a symbolic link from this directory down."""
    redact: Callable[[str], str] = field(default=_as_is, compare=False)
    """Applied to every text written."""

    @classmethod
    def in_state_dir(cls, state_dir: Path, redact: Callable[[str], str] = _as_is) -> ContextFiles:
        """The layout below a state directory: `context/` for the stores, `backups/` beside it."""
        return cls(state_dir / CONTEXT_DIR_NAME, state_dir / BACKUPS_DIR_NAME, state_dir, redact)

    @classmethod
    def for_project(cls, root: str | Path, redact: Callable[[str], str] = _as_is) -> ContextFiles:
        """`<root>/.autonomous/context/`, the root resolved."""
        return cls.in_state_dir(Path(root).resolve() / PROJECT_STATE_DIR, redact)

    @property
    def running_summary(self) -> Path:
        return self.directory / "running-summary.json"

    @property
    def key_decisions(self) -> Path:
        return self.directory / "key-decisions.json"

    @property
    def failure_memory(self) -> Path:
        return self.directory / "failure-memory.json"

    @property
    def active_constraints(self) -> Path:
        return self.directory / "active-constraints.json"

    @property
    def pending_reports(self) -> Path:
        return self.directory / "pending-reports.jsonl"

    def write_text(self, path: Path, text: str) -> None:
        """Replace `path` with `text` atomically, redacted."""
        write_text_atomic(path, self.redact(text), self.guard_root)

    def append_json_line(self, path: Path, record: object, *, fsync: bool = True) -> None:
        """Append `record` as one JSON line, redacted."""
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        append_line(path, self.redact(line), self.guard_root, fsync=fsync)

    def set_aside(self, path: Path, reason: str = "corrupt") -> Path:
        """Move a damaged file into `backups_dir`; returns where it went."""
        return set_aside(path, self.backups_dir, reason, self.guard_root)


def refuse_links(path: Path, guard_root: Path | None) -> None:
    """Raise `LinkRefused` if `path`, or a directory above it up to `guard_root`, is a symbolic link.

    Paths outside `guard_root` (or any path, when it is None) are not checked: they are the user's.
    """
    if guard_root is None:
        return
    try:
        below = path.relative_to(guard_root.parent)
    except ValueError:
        return
    current = guard_root.parent
    for part in below.parts:
        current = current / part
        if current.is_symlink():
            raise LinkRefused(
                f"{current} is a symbolic link (to {os.readlink(current)}); orchestrate keeps its state "
                "inside the project and never writes through a link: remove the link and run again"
            )


def write_text_atomic(path: Path, text: str, guard_root: Path | None, *, shared: bool = False) -> None:
    """Replace `path` with `text` (UTF-8) atomically; no symbolic link below `guard_root` followed.

    The file is private (0600) unless `shared`: a report the user hands on gets the mode any
    new file gets under the user's umask.
    """
    refuse_links(path.parent, guard_root)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            if shared:
                os.fchmod(handle.fileno(), 0o666 & ~current_umask())
            os.fsync(handle.fileno())
        os.replace(tmp, path)  # a link at `path` is replaced, never written through
    except BaseException:
        # Interrupted or failed: the target is untouched; drop the partial temp file.
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    fsync_dir(path.parent)


def current_umask() -> int:
    """The process's umask (reading it means setting it: put straight back)."""
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def append_line(path: Path, line: str, guard_root: Path | None, *, fsync: bool = True) -> None:
    """Append `line` and a newline, flushed (and fsynced, with `fsync`).

    A kill loses at most the line being written; readers skip a torn last line. Flushing
    alone survives a killed process; fsync also survives a power cut.
    """
    refuse_links(path.parent, guard_root)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open_for_append(path) as handle:
        handle.write(line + "\n")
        handle.flush()
        if fsync:
            os.fsync(handle.fileno())


def set_aside(path: Path, backups_dir: Path, reason: str, guard_root: Path | None) -> Path:
    """Move a damaged file into `backups_dir` under a unique name; never delete it.

    A link is moved as the link itself: its target stays where it is, untouched.
    """
    refuse_links(backups_dir, guard_root)
    backups_dir.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = backups_dir / f"{path.name}.{reason}-{stamp}-{os.getpid()}"
    counter = 0
    while target.exists():
        counter += 1
        target = backups_dir / f"{path.name}.{reason}-{stamp}-{os.getpid()}-{counter}"
    os.replace(path, target)
    return target


class TooLarge(OSError):
    """A file larger than the reader's bound: not ours, and not worth reading."""


def read_bounded(path: Path, max_bytes: int) -> bytes:
    """The bytes of `path`, never through a link; `TooLarge` when it has more than `max_bytes`,
    `FileNotFoundError` when it is missing, `OSError` when it cannot be read (a link in its place,
    which could lead the read to any file of the user's, included)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise LinkRefused(errno.ELOOP, "it is a symbolic link; orchestrate never reads through one") from exc
        raise
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "it is not a regular file")
        if info.st_size > max_bytes:
            raise TooLarge(f"larger than {max_bytes} bytes")
        return handle.read(max_bytes + 1)


def open_for_append(path: Path) -> TextIO:
    """`path` opened for appending, without following a link: a link in its place is replaced."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as err:
        if err.errno != errno.ELOOP:
            raise
        os.unlink(path)  # the link only: what it points to is left alone
        fd = os.open(path, flags, 0o644)
    return os.fdopen(fd, "a", encoding="utf-8")


def fsync_dir(directory: Path) -> None:
    """Make a rename in `directory` durable; best effort."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)

