"""The working-memory log: `.autonomous/memory/working-memory.jsonl`, written in every strategy.

One JSON object a line, each with `type` and `ts_ms`:
- `text_input`: a feature request sent to the agent;
- `text_output`: the agent's final text or report;
- `wm_event`: tool calls, verification results, status changes;
- `wm_insight`: summaries from the Context Agent.
Appends are flushed line by line, so a kill loses at most the line being written.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.atomic import append_jsonl

KINDS = ("text_input", "text_output", "wm_event", "wm_insight")


class WorkingMemory:
    """Appends entries to the log; never raises (a full disk must not stop a run)."""

    def __init__(self, path: Path, enabled: bool = True) -> None:
        self.path = path
        self.enabled = enabled
        self._last_ts = 0
        self.error: str | None = None

    def append(self, kind: str, **data: Any) -> None:
        if not self.enabled:
            return
        # Strictly increasing timestamps keep replay order equal to append order.
        ts = max(int(time.time() * 1000), self._last_ts + 1)
        self._last_ts = ts
        try:
            append_jsonl(self.path, {"type": kind, "ts_ms": ts, **data}, fsync=False)
        except OSError as err:
            self.error = str(err)


@dataclass
class ParsedLog:
    """The valid entries of a log, sorted by ts_ms, and what was skipped."""

    entries: list[dict[str, Any]] = field(default_factory=list)
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
    """Parse the log; a missing file is an empty log. Blank lines are not counted."""
    parsed = ParsedLog()
    if not path.exists():
        return parsed
    with open(path, "rb") as handle:
        for raw in handle:
            if not raw.strip():
                continue
            parsed.total_lines += 1
            try:
                entry = json.loads(raw.decode("utf-8"))
            except (ValueError, UnicodeDecodeError, RecursionError):
                parsed.skipped_invalid_json += 1
                continue
            ts = entry.get("ts_ms") if isinstance(entry, dict) else None
            if (
                not isinstance(entry, dict)
                or not isinstance(entry.get("type"), str)
                or isinstance(ts, bool)
                or not isinstance(ts, (int, float))
            ):
                parsed.skipped_invalid_shape += 1
                continue
            parsed.entries.append(entry)
    parsed.parsed_entries = len(parsed.entries)
    parsed.entries.sort(key=lambda e: e["ts_ms"])  # stable: equal stamps keep file order
    return parsed
