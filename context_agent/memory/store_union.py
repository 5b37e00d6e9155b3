"""Merging another project's Context Agent stores into these (shards of one spec, combined).

Each item keeps its feature id; an item already stored (same wording, or for failures the same
feature and description) is not added twice, so merging the same stores again changes nothing.
Items go in in the order they were first recorded (`createdAt`), and the stores' caps and
eviction rules (`store_updates`) apply as if they had been recorded here. Another summary is
appended to this one as a paragraph, unless this one holds it already, within the summary cap.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from context_agent.agent_events import EventHandler, EventReporter
from context_agent.memory.store_updates import add_constraint, add_decision, add_failure
from context_agent.memory.stores import ContextStores, RetiredConstraint, load_stores, save_stores
from context_agent.memory.summary_notes import add_recent_note, enforce_summary_cap
from shared_base.files import ContextFiles


@dataclass
class StoresMerged:
    """How many items a merge added."""

    decisions: int = 0
    failures: int = 0
    constraints: int = 0


def merge_stores(into: ContextStores, other: ContextStores) -> StoresMerged:
    """Add what `other` knows to `into` (in memory); returns how many items were new."""
    merged = StoresMerged()
    for decision in sorted(other.decisions.decisions, key=lambda item: (item.created_at, item.seq)):
        if add_decision(into.decisions, decision.text, decision.feature_id, category=decision.category,
                        source="report", now=decision.created_at):
            merged.decisions += 1
    for failure in sorted(other.failures.failures, key=lambda item: (item.created_at, item.seq)):
        if not _has_failure(into, failure.feature_id, failure.description) and add_failure(
            into.failures, failure.feature_id, attempt=failure.attempt, command=failure.command,
            exit_code=failure.exit_code, description=failure.description, prevention=failure.prevention,
            prevention_source=failure.prevention_source, now=failure.created_at,
        ):
            merged.failures += 1
    for constraint in sorted(other.constraints.constraints, key=lambda item: (item.created_at, item.seq)):
        if add_constraint(into.constraints, constraint.description, constraint.feature_id,
                          category=constraint.category, source="report", now=constraint.created_at):
            merged.constraints += 1
    _merge_retired(into, other.constraints.retired)
    _merge_summary(into, other)
    return merged


def _has_failure(stores: ContextStores, feature_id: str, description: str) -> bool:
    # add_failure refreshes a repeat (a retry seen again); a merge must leave it as it is.
    return any(f.feature_id == feature_id and f.description == description for f in stores.failures.failures)


def _merge_retired(into: ContextStores, retired: list[RetiredConstraint]) -> None:
    known = {(item.description, item.feature_id) for item in into.constraints.retired}
    for item in retired:
        if (item.description, item.feature_id) not in known:
            into.constraints.retired.append(item)
            known.add((item.description, item.feature_id))


def _merge_summary(into: ContextStores, other: ContextStores) -> None:
    mine, theirs = into.summary, other.summary
    text = theirs.summary.strip()
    if text and text not in mine.summary:
        mine.summary = f"{mine.summary.rstrip()}\n\n{text}".strip()
        mine.features_summarized += theirs.features_summarized
    known = {(note.feature_id, note.summary) for note in mine.recent}
    for note in theirs.recent:
        if (note.feature_id, note.summary) not in known:
            add_recent_note(mine, note.feature_id, note.summary, now=note.recorded_at, cap=False)
    enforce_summary_cap(mine)


def merge_store_files(into: ContextFiles, other: ContextFiles, on_event: EventHandler | None = None) -> StoresMerged:
    """Merge the stores in `other`'s directory into those in `into`'s, and save them.
    A damaged store is reported through `on_event` and read as empty, as everywhere."""
    events = EventReporter(on_event)
    target = load_stores(into, events)
    merged = merge_stores(target, load_stores(other, events))
    save_stores(into, target)
    _merge_pending(into, other)
    return merged


def _merge_pending(into: ContextFiles, other: ContextFiles) -> None:
    """Reports not yet folded into `other`'s stores: their lines, added once."""
    try:
        theirs = other.pending_reports.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return
    try:
        mine = set(into.pending_reports.read_text(encoding="utf-8").splitlines())
    except FileNotFoundError:
        mine = set()
    for line in theirs:
        if line.strip() and line not in mine:
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a torn line: its report is in the feature's log
            into.append_json_line(into.pending_reports, record, fsync=False)
            mine.add(line)
