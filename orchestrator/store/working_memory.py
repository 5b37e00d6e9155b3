"""The working-memory log: `.autonomous/memory/working-memory.jsonl`, written in every strategy.

One JSON object a line, each with `type` and `ts_ms`:
- `text_input`: a feature request sent to the agent;
- `text_output`: the agent's final text or report;
- `wm_event`: tool calls, verification results, status changes;
- `wm_insight`: summaries from the Context Agent.
Appends are flushed line by line, so a kill loses at most the line being written.

Reading is bounded: a log over `MAX_LOG_BYTES` is not read, and a line over `MAX_LINE_BYTES`
is skipped unread. At the start of a run `check_log` warns about unreadable lines (not UTF-8,
not JSON, nested too deeply, too long) and sets aside into `.autonomous/backups/` a log that
is oversized or has no readable entry at all.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.json_types import JsonObject
from orchestrator.store.disk.atomic import append_jsonl, set_aside
from orchestrator.store.disk.no_follow import lexists, open_no_follow
from orchestrator.store.memory_entries import MemoryEntry, dump_entry
from shared_base.files import LinkRefused

# Far above what a long run writes (prompts are bounded by the spec's 10 MB); beyond this the
# file is not ours, or not worth reading line by line at the start of every feature.
MAX_LOG_BYTES = 256 * 1024 * 1024
MAX_LINE_BYTES = 16 * 1024 * 1024

KINDS = ("text_input", "text_output", "wm_event", "wm_insight")  # their models: memory_entries


class WorkingMemory:
    """Appends entries (`memory_entries`, typed) to the log; a full disk never stops a run."""

    def __init__(
        self, path: Path, enabled: bool = True, on_warning: Callable[[str], None] | None = None,
        backups_dir: Path | None = None,
    ) -> None:
        self.path = path
        self.enabled = enabled
        self._last_ts = 0
        self._lock = threading.Lock()  # `--jobs N`: workers append at once; the log stays one line per entry
        self.error: str | None = None
        if on_warning is not None:
            # The run is about to append to (and maybe replay) this log: make sure it is ours.
            message = check_log(path, backups_dir or path.parent.parent / "backups")
            if message:
                on_warning(message)

    def append(self, entry: MemoryEntry) -> None:
        """Append `entry` (its `ts_ms` stamped here; the entry given is left as it was)."""
        if not self.enabled:
            return
        with self._lock:
            # Strictly increasing timestamps keep replay order equal to append order.
            ts = max(int(time.time() * 1000), self._last_ts + 1)
            self._last_ts = ts
            line = dump_entry(entry.model_copy(update={"ts_ms": ts}))
            try:
                append_jsonl(self.path, line, fsync=False)
            except OSError as err:
                self.error = str(err)


@dataclass
class ParsedLog:
    """The valid entries of a log, sorted by ts_ms, and what was skipped."""

    # Replayed as they are (spec section 7): any JSON object with a string `type` and numeric `ts_ms`.
    entries: list[JsonObject] = field(default_factory=list)
    total_lines: int = 0
    parsed_entries: int = 0
    skipped_invalid_json: int = 0
    skipped_invalid_shape: int = 0

    def stats(self) -> dict[str, int]:
        return {
            "total_lines": self.total_lines,
            "parsed_entries": self.parsed_entries,
            "skipped_invalid_json": self.skipped_invalid_json,
            "skipped_invalid_shape": self.skipped_invalid_shape,
        }


def read_log(path: Path) -> ParsedLog:
    """Parse the log; a missing (or oversized) file is an empty log, a link `LinkRefused`. Blank lines are not counted."""
    parsed = ParsedLog()
    try:
        if not lexists(path) or os.lstat(path).st_size > MAX_LOG_BYTES:  # a link: refused by `_lines`
            return parsed
    except OSError:
        return parsed
    for raw in _lines(path):
        if not raw.strip():
            continue
        parsed.total_lines += 1
        entry = _parse(raw)
        if entry is None:
            parsed.skipped_invalid_json += 1
            continue
        if not _valid_shape(entry):
            parsed.skipped_invalid_shape += 1
            continue
        parsed.entries.append(entry)
    parsed.parsed_entries = len(parsed.entries)
    parsed.entries.sort(key=lambda e: e["ts_ms"])  # stable: equal stamps keep file order
    return parsed


def check_log(path: Path, backups_dir: Path) -> str | None:
    """Look at the log before a run appends to it; a warning, or None if it is fine. Raises only
    `LinkRefused` (a link in place of the log).

    A log over `MAX_LOG_BYTES`, or one in which no line is a readable entry, is not ours: it is
    set aside into `backups_dir` and a new log starts. A log with some unreadable lines keeps
    them: replay skips and counts them (section 7 of the spec), and the warning says so. A torn
    last line (a kill mid-append) is normal and not mentioned.
    """
    try:
        if not lexists(path):
            return None
        if os.lstat(path).st_size > MAX_LOG_BYTES:  # a link's own size: `_lines` refuses it below
            backup = set_aside(path, backups_dir)
            return (f"working-memory log {path} is larger than {MAX_LOG_BYTES} bytes; set aside as {backup}; "
                    "a new log is started")
        good = damaged = 0
        previous: bytes | None = None
        for raw in _lines(path):
            if previous is not None and previous.strip():
                good, damaged = (good + 1, damaged) if _readable(previous) else (good, damaged + 1)
            previous = raw
        if previous is not None and previous.strip():
            if _readable(previous):
                good += 1
            elif previous.endswith(b"\n") or not previous.startswith(b'{"type":'):
                damaged += 1  # only the start of one of our entries, cut short, is a torn append
        if not damaged:
            return None
        what = f"{damaged} unreadable line(s) (not UTF-8, not JSON, nested too deeply, too long or not an entry)"
        if good:
            return f"working-memory log {path}: {what}; they are skipped, and counted in replay statistics"
        backup = set_aside(path, backups_dir)
        return f"working-memory log {path} has no readable entry, {what}; set aside as {backup}; a new log is started"
    except LinkRefused:
        raise  # a link there stops the run, saying so: never read through, never passed over
    except OSError as err:
        return f"working-memory log {path} could not be checked: {err}"


def _readable(raw: bytes) -> bool:
    return _valid_shape(_parse(raw))


def _lines(path: Path) -> Iterator[bytes]:
    """The file's lines, each at most MAX_LINE_BYTES (a longer one comes back as `b"{"`, i.e. invalid)."""
    with open_no_follow(path) as handle:
        while True:
            raw = handle.readline(MAX_LINE_BYTES + 1)
            if not raw:
                return
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                # Too long to be an entry: skip to the end of the line without keeping it.
                while (rest := handle.readline(1 << 20)) and not rest.endswith(b"\n"):
                    pass
                yield b"{\n" if rest else b"{"
                continue
            yield raw


def _parse(raw: bytes) -> Any:
    """The JSON value of one line, or None when it is not UTF-8 JSON (or nested too deeply)."""
    try:
        return json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None


def _valid_shape(entry: Any) -> bool:
    ts = entry.get("ts_ms") if isinstance(entry, dict) else None
    return (
        isinstance(entry, dict)
        and isinstance(entry.get("type"), str)
        and not isinstance(ts, bool)
        and isinstance(ts, (int, float))
    )
