"""Crash-safe file writes: every state change in the program goes through here.

A write goes to a temporary file in the same directory, is flushed and fsynced, then
renamed over the target, and the directory is fsynced, so a kill at any instant leaves
either the old or the new file, never a torn one.

Every text written here passes through `secrets.redact` first: whatever reaches a state file,
log, store, event or report, the API key (or anything shaped like one) is never written.

No write follows a symbolic link out of `.autonomous/`: a link in place of a file is replaced,
and a linked directory is refused (`LinkRefused`).
"""

from __future__ import annotations

import errno
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any, TextIO

from orchestrator.safety.secrets import redact
from orchestrator.store.paths import STATE_DIR_NAME


class LinkRefused(OSError):
    """A state path leads through a symbolic link: writing there could land outside the project."""


def refuse_links(path: Path) -> None:
    """Raise `LinkRefused` if `path`, or a directory above it up to `.autonomous`, is a symbolic link.

    The project root is resolved (`ProjectPaths`), so only a link from `.autonomous` down can
    lead a write out of the project: one planted by the agent's commands or by a check, or
    shipped in a cloned repository. Paths outside `.autonomous` (`--report PATH`) are the user's.
    """
    parts = path.parts
    if STATE_DIR_NAME not in parts:
        return
    start = parts.index(STATE_DIR_NAME)
    current = Path(*parts[:start])
    for part in parts[start:]:
        current = current / part
        if current.is_symlink():
            raise LinkRefused(
                f"{current} is a symbolic link (to {os.readlink(current)}); orchestrate keeps its state "
                "inside the project and never writes through a link: remove the link and run again"
            )


def write_text_atomic(path: Path, text: str) -> None:
    """Replace `path` with `text` (UTF-8) atomically, secrets redacted."""
    text = redact(text)
    refuse_links(path.parent)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)  # a link at `path` is replaced, never written through
    except BaseException:
        # Interrupted or failed: the target is untouched; drop the partial temp file.
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    _fsync_dir(path.parent)


def write_json_atomic(path: Path, data: Any) -> None:
    """Replace `path` with `data` as indented JSON, atomically."""
    write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def append_jsonl(path: Path, record: Any, *, fsync: bool = True) -> None:
    """Append one JSON object as one line and flush it (to disk too, with `fsync`).

    A kill loses at most the line being written; readers skip a torn last line. Flushing
    alone survives a killed process; fsync also survives a power cut.
    """
    refuse_links(path.parent)
    path.parent.mkdir(parents=True, exist_ok=True)
    line = redact(json.dumps(record, ensure_ascii=False, separators=(",", ":"))) + "\n"
    with _open_for_append(path) as handle:
        handle.write(line)
        handle.flush()
        if fsync:
            os.fsync(handle.fileno())


def set_aside(path: Path, backups_dir: Path, reason: str = "corrupt") -> Path:
    """Move a damaged file into `backups_dir` under a unique name; never delete it.

    A link is moved as the link itself: its target stays where it is, untouched.
    """
    refuse_links(backups_dir)
    backups_dir.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = backups_dir / f"{path.name}.{reason}-{stamp}-{os.getpid()}"
    counter = 0
    while target.exists():
        counter += 1
        target = backups_dir / f"{path.name}.{reason}-{stamp}-{os.getpid()}-{counter}"
    os.replace(path, target)
    return target


def _open_for_append(path: Path) -> TextIO:
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


def _fsync_dir(directory: Path) -> None:
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
