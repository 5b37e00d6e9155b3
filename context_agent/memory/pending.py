"""`context/pending-reports.jsonl`: the agents' reports recorded since the last summarization.

Recording a report used to rewrite two stores with four fsyncs, once per feature. The report
is already on disk, fsynced, in the feature's log, and the next summarization folds the logs
of the features it covers into the stores. So a report is appended here, flushed but not
fsynced, and every reader of the stores applies these lines on top of them; the summarization
writes the stores (fsynced) and removes this file. A kill loses at most a torn last line; a
power cut may lose the unsynced tail, which the summarization takes back from the logs.

Reading is bounded (`MAX_PENDING_BYTES`); a larger file is set aside, like a damaged store.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from context_agent.agent_events import EventReporter
from context_agent.records.report_reading import AgentReport, parse_report
from shared_base.files import ContextFiles, TooLarge, read_bounded

# A line is one report (a few hundred bytes); a summarization every few features empties the file.
MAX_PENDING_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class PendingReport:
    """One recorded report not yet folded into the stores."""

    feature_id: str
    report: AgentReport
    recorded_at: int


def append_report(files: ContextFiles, feature_id: str, report: AgentReport, now: int) -> None:
    """Add a report to the pending file; flushed, not fsynced (the feature log holds it)."""
    record = {
        "featureId": feature_id, "recordedAt": now,
        "report": {"summary": report.summary, "decisions": report.decisions,
                   "constraints": report.constraints, "notes": report.notes},
    }
    files.append_json_line(files.pending_reports, record, fsync=False)


def read_pending(files: ContextFiles, events: EventReporter) -> list[PendingReport]:
    """The pending reports in the order they were recorded; [] when there are none.

    Lines that are not a report (a torn last line after a kill) are skipped.
    """
    path = files.pending_reports
    try:
        data = read_bounded(path, MAX_PENDING_BYTES)
    except TooLarge as exc:
        _set_aside_large(files, exc, events)
        return []
    except FileNotFoundError:
        return []
    except OSError as exc:
        events.emit("context.store_unreadable", f"cannot read {path.name} ({exc}); reading it as empty",
                    file=str(path), error=str(exc))
        return []
    pending = []
    for raw in data.splitlines():
        entry = _parse(raw)
        if entry is not None:
            pending.append(entry)
    return pending


def _set_aside_large(files: ContextFiles, problem: TooLarge, events: EventReporter) -> None:
    path = files.pending_reports
    try:
        backup = files.set_aside(path)
    except OSError as exc:
        events.emit("context.store_unreadable", f"cannot read {path.name} ({exc}); reading it as empty",
                    file=str(path), error=str(exc))
        return
    events.emit(
        "context.store_corrupt",
        f"{path.name} is {problem}; moved to {backup}; the next summarization takes the reports from "
        "the feature logs",
        file=str(path), backup=str(backup),
    )


def clear_pending(files: ContextFiles) -> None:
    """Remove the pending file once the stores that fold it in are safely written."""
    files.pending_reports.unlink(missing_ok=True)


def _parse(raw: bytes) -> PendingReport | None:
    try:
        entry: Any = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(entry, dict):
        return None
    feature_id, recorded_at = entry.get("featureId"), entry.get("recordedAt")
    if not isinstance(feature_id, str) or not feature_id or isinstance(recorded_at, bool) or not isinstance(recorded_at, int):
        return None
    return PendingReport(feature_id, parse_report(entry.get("report")), recorded_at)
