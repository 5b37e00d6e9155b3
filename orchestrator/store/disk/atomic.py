"""Crash-safe file writes: every state change in the program goes through here.

A write goes to a temporary file in the same directory, is flushed and fsynced, then
renamed over the target, and the directory is fsynced, so a kill at any instant leaves
either the old or the new file, never a torn one.

Every text written here passes through `secrets.redact` first: whatever reaches a state file,
log, store, event or report, the API key (or anything shaped like one) is never written.

No write follows a symbolic link out of `.autonomous/`: a link in place of a file is replaced,
and a linked directory is refused (`LinkRefused`). No deletion follows one either
(`remove_no_follow`): a link is removed as the link, a directory without entering any link in it.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path
from typing import Any

from orchestrator.safety.credentials.redaction import redact
from orchestrator.store.disk.paths import STATE_DIR_NAME
from shared_base import files


def _guard_root(path: Path) -> Path | None:
    """`.autonomous` when `path` lies below it: the part no write may follow a link through.

    The project root is resolved (`ProjectPaths`), so only a link from `.autonomous` down can
    lead a write out of the project: one planted by the agent's commands or by a check, or
    shipped in a cloned repository. Paths outside `.autonomous` (`--report PATH`) are the user's.
    """
    parts = path.parts
    if STATE_DIR_NAME not in parts:
        return None
    return Path(*parts[: parts.index(STATE_DIR_NAME) + 1])


def refuse_links(path: Path) -> None:
    """Raise `LinkRefused` if `path`, or a directory above it up to `.autonomous`, is a symbolic link."""
    files.refuse_links(path, _guard_root(path))


def write_text_atomic(path: Path, text: str) -> None:
    """Replace `path` with `text` (UTF-8) atomically, secrets redacted."""
    files.write_text_atomic(path, redact(text), _guard_root(path))


def write_report_atomic(path: Path, text: str) -> None:
    """Like `write_text_atomic`, for a report the user reads and hands on: its mode follows the
    umask (0644 under 022), where the state stays private."""
    files.write_text_atomic(path, redact(text), _guard_root(path), shared=True)


def write_json_atomic(path: Path, data: Any) -> None:
    """Replace `path` with `data` as indented JSON, atomically."""
    write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def append_jsonl(path: Path, record: Any, *, fsync: bool = True) -> None:
    """Append one JSON object as one line and flush it (to disk too, with `fsync`).

    A kill loses at most the line being written; readers skip a torn last line. Flushing
    alone survives a killed process; fsync also survives a power cut.
    """
    line = redact(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
    files.append_line(path, line, _guard_root(path), fsync=fsync)


def set_aside(path: Path, backups_dir: Path, reason: str = "corrupt") -> Path:
    """Move a damaged file into `backups_dir` under a unique name; never delete it.

    A link is moved as the link itself: its target stays where it is, untouched.
    """
    return files.set_aside(path, backups_dir, reason, _guard_root(backups_dir))


def remove_no_follow(path: Path) -> bool:
    """Delete `path` (a file, a link, or a directory and all below it) without following any link.

    Raises `LinkRefused` if a directory above it, up to `.autonomous`, is a link (what lies
    through it is not the program's to delete); a link at `path` itself is removed as the link.
    Whether something was there.
    """
    refuse_links(path.parent)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return False
    if stat.S_ISDIR(mode):
        # On Linux rmtree works through directory descriptors (`avoids_symlink_attacks`): a link
        # inside, even one swapped in during the removal, is unlinked, never entered.
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
    return True
