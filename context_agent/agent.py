"""`ContextAgent`: the orchestrator's one handle on project memory.

Every public method catches its own failures, reports them through `on_event` (or stderr),
and degrades: an empty injection, an unrecorded item, a fallback summary. Nothing here may
stop a run. Each call loads the stores from disk and writes back what it changed at once, so
the next feature, a resumed run and `orchestrate context` all see the same memory. An agent's
report is the exception: it is appended to the pending reports (pending.py), which every
load applies on top of the stores, and which the next summarization folds in.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from orchestrator.store.paths import ProjectPaths

from .budget import MAX_ACTIVE_CONSTRAINTS
from .events import EventHandler, EventReporter
from .failure_text import default_prevention, describe_check_failure
from .fallback import fallback_summary
from .injection import ContextInjection, build_injection
from .interfaces import FeatureLike, ModelCall
from .logs import FeatureOutcome, read_outcome
from .merge import MergeOutcome, merge_answer, summary_rejection
from .pending import append_report, clear_pending, read_pending
from .recording import (
    add_constraint,
    add_decision,
    add_failure,
    add_recent_note,
    enforce_constraint_limit,
    enforce_summary_cap,
    set_prevention,
)
from .reports import AgentReport, parse_report
from .stores import (
    ContextStores,
    FailureMemory,
    load_store,
    load_stores,
    save_store,
    save_stores,
)
from .summarizer import SummarizerError, build_request, parse_answer
from .tokens import estimate_tokens

DEFAULT_SUMMARIZER_MODEL = "claude-haiku-5-5"
_EVICTED_NAMED = 10  # constraints named in the eviction message; the event's data lists all


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class ContextAgent:
    """Compressed project memory: recorded as features happen, injected under budget,
    re-compressed by the summarizer."""

    def __init__(
        self,
        project_root: str | Path,
        *,
        features: Sequence[FeatureLike] = (),
        model_call: ModelCall | None = None,
        summarizer_model: str = DEFAULT_SUMMARIZER_MODEL,
        on_event: EventHandler | None = None,
    ) -> None:
        self.paths = ProjectPaths.for_project(project_root)
        self.features: dict[str, FeatureLike] = {
            feature.id: feature for feature in features if isinstance(getattr(feature, "id", None), str)
        }
        self.model_call = model_call
        self.summarizer_model = summarizer_model
        self.events = EventReporter(on_event)

    # --- injection -------------------------------------------------------------------------

    def get_injection(self, feature_id: str) -> dict[str, Any]:
        """The context for `feature_id`: summary, decisions, failures, constraints and
        `tokenCount` (0 when there is nothing, or when building it failed)."""
        try:
            return build_injection(self._load(), feature_id, self.features).as_dict()
        except Exception as exc:
            self._failed("context.injection_failed", f"building the context for {feature_id}", exc, feature_id)
            return ContextInjection(feature_id=feature_id).as_dict()

    def memory(self) -> ContextStores:
        """The four stores as the next feature's injection sees them: as on disk, with the
        reports recorded since the last summarization applied."""
        return self._load()

    # --- recording as features happen -----------------------------------------------------

    def record_report(self, feature_id: str, report: Mapping[str, Any]) -> None:
        """Record the agent's report: its decisions and constraints, and its summary until the
        next summarization folds it in. Seen at once by every later `get_injection`."""
        try:
            # Appended, not fsynced: the feature's log holds the report durably (pending.py).
            append_report(self.paths, feature_id, parse_report(report), _now_ms())
        except Exception as exc:
            self._failed("context.record_failed", f"recording the report of {feature_id}", exc, feature_id)

    def record_failure(self, feature_id: str, attempt: int, verification: Mapping[str, Any]) -> None:
        """Store a failed check; its description comes from the check's output."""
        try:
            memory = load_store(self.paths.failure_memory, FailureMemory, self.paths, self.events)
            add_failure(
                memory, feature_id, attempt=int(attempt),
                command=str(verification.get("command") or ""),
                exit_code=_int_or_none(verification.get("exitCode")),
                description=describe_check_failure(verification),
                prevention=default_prevention(verification), prevention_source="default",
                now=_now_ms(),
            )
            save_store(self.paths, "failures", memory)
        except Exception as exc:
            self._failed("context.record_failed", f"recording the failure of {feature_id}", exc, feature_id)

    def record_prevention(self, feature_id: str, prevention: str) -> None:
        """Store what was learned about avoiding the feature's recorded failures."""
        try:
            memory = load_store(self.paths.failure_memory, FailureMemory, self.paths, self.events)
            if set_prevention(memory, feature_id, str(prevention), "agent"):
                save_store(self.paths, "failures", memory)
        except Exception as exc:
            self._failed("context.record_failed", f"recording the prevention for {feature_id}", exc, feature_id)

    # --- summarization ----------------------------------------------------------------------

    def summarize(self, feature_ids: Sequence[str], trigger: str, *, use_model: bool = True) -> dict[str, Any]:
        """Re-compress memory with one summarizer call over the features since the last one.

        Returns `{success, newDecisions, newFailures, error}` plus details for the working-memory
        log (`source` "model" or "fallback", `summary`, `summaryTokens`, `newConstraints`,
        `retiredDecisions`, `retiredConstraints`, `evictedConstraints`, `preventions`,
        `featureIds`, `trigger`). Never raises; on failure the fallback summary is written and
        `success` is False. With `use_model` False (a strategy that never injects the summary)
        no model is called: the stores are folded and the deterministic summary stored, but
        not returned as `summary` ("", so that the working-memory log, which replay sends
        back with every request, does not carry a summary no one asked for).
        """
        ids = [str(feature_id) for feature_id in feature_ids]
        result: dict[str, Any] = {
            "success": False, "newDecisions": 0, "newFailures": 0, "error": None,
            "trigger": trigger, "featureIds": ids, "source": "fallback", "model": self.summarizer_model,
            "summary": "", "summaryTokens": 0, "newConstraints": 0, "retiredDecisions": 0,
            "retiredConstraints": 0, "evictedConstraints": 0, "preventions": 0,
        }
        try:
            self._summarize(ids, trigger, result, use_model)
        except Exception as exc:
            result["success"] = False
            result["error"] = result["error"] or f"summarization failed: {exc}"
            self._failed("summarizer.failed", "summarizing", exc, None, trigger=trigger, featureIds=ids)
        return result

    def _summarize(self, ids: list[str], trigger: str, result: dict[str, Any], use_model: bool) -> None:
        now = _now_ms()
        stores = self._load()
        outcomes = [read_outcome(self.paths, fid, self.features.get(fid)) for fid in ids]
        # Reports in the logs are merged first (duplicates are no-ops), so a report that never
        # reached record_report, e.g. after a crash, is not lost whatever the summarizer does.
        for outcome in outcomes:
            added = _ingest_report(stores, outcome.id, outcome.report, self._category(outcome.id), now)
            result["newDecisions"] += added[0]
            result["newConstraints"] += added[1]
        notes = {note.feature_id: note.summary for note in stores.summary.recent}
        new_summary: str | None = None
        if not use_model:
            result["success"], result["model"] = True, None
            self._fold(stores, fallback_summary(stores.summary.summary, outcomes, notes), ids, trigger, result, now)
            result["summary"] = ""
            return
        try:
            answer = parse_answer(self._call_model(stores, outcomes, trigger))
            merged = merge_answer(
                stores, answer, set(ids), category_of=self._category, by=f"summarizer:{trigger}", now=now
            )
            _count(result, merged)
            result["success"] = True
            rejection = summary_rejection(answer.summary)
            if rejection is None:
                new_summary, result["source"] = answer.summary.strip(), "model"
            else:
                self.events.emit(
                    "summarizer.summary_rejected",
                    f"kept the previous summary and added the new features to it: {rejection}",
                    reason=rejection, trigger=trigger,
                )
        except Exception as exc:
            result["error"] = (
                str(exc) if isinstance(exc, SummarizerError)
                else f"summarizer call failed: {type(exc).__name__}: {exc}"
            )
            self.events.emit(
                "summarizer.failed",
                f"{result['error']}; wrote a deterministic summary from the logs instead",
                error=result["error"], trigger=trigger, featureIds=ids,
            )
        if new_summary is None:
            new_summary = fallback_summary(stores.summary.summary, outcomes, notes)
        self._fold(stores, new_summary, ids, trigger, result, now)

    def _fold(
        self, stores: ContextStores, summary: str, ids: list[str], trigger: str, result: dict[str, Any], now: int
    ) -> None:
        """Write the new summary and the stores, within their limits; the pending reports are
        in the stores from then on."""
        self._store_summary(stores, summary, ids, trigger, result, now)
        evicted = enforce_constraint_limit(stores.constraints, now=now)
        if evicted:
            result["evictedConstraints"] = len(evicted)
            self._report_evicted(evicted, trigger)
        save_stores(self.paths, stores)
        clear_pending(self.paths)

    def _call_model(self, stores: ContextStores, outcomes: list[FeatureOutcome], trigger: str) -> Any:
        if self.model_call is None:
            raise SummarizerError("no summarizer model is configured")
        return self.model_call(**build_request(self.summarizer_model, stores, outcomes, trigger))

    def _store_summary(
        self, stores: ContextStores, text: str, ids: list[str], trigger: str,
        result: dict[str, Any], now: int,
    ) -> None:
        summary = stores.summary
        summary.summary = text
        summary.source = result["source"]
        summary.model = self.summarizer_model if result["source"] == "model" else None
        summary.trigger, summary.updated_at = trigger, now
        summary.features_summarized += len(ids)
        done = set(ids)
        summary.recent = [note for note in summary.recent if note.feature_id not in done]
        enforce_summary_cap(summary)
        result["summary"] = summary.summary
        result["summaryTokens"] = estimate_tokens(summary.summary)

    # --- helpers ----------------------------------------------------------------------------

    def _load(self) -> ContextStores:
        """The stores with the reports recorded since the last summarization applied."""
        stores = load_stores(self.paths, self.events)
        # After a kill between writing the stores and removing the file, its reports are applied
        # twice: the items are duplicates (no-ops); only a recent note comes back until the next fold.
        pending_reports = read_pending(self.paths, self.events)
        for pending in pending_reports:
            _ingest_report(stores, pending.feature_id, pending.report, self._category(pending.feature_id),
                           pending.recorded_at)
            add_recent_note(stores.summary, pending.feature_id, pending.report.summary, now=pending.recorded_at,
                            cap=False)
        if pending_reports:
            enforce_summary_cap(stores.summary)
        return stores

    def _report_evicted(self, evicted: list[Any], trigger: str) -> None:
        """Say which constraints the limit retired: none may disappear unnoticed."""
        shown = "; ".join(f"[{item.id}] {item.description}" for item in evicted[:_EVICTED_NAMED])
        more = f"; and {len(evicted) - _EVICTED_NAMED} more" if len(evicted) > _EVICTED_NAMED else ""
        self.events.emit(
            "context.constraints_evicted",
            f"more than {MAX_ACTIVE_CONSTRAINTS} active constraints and the summarizer did not consolidate "
            f"them: retired {len(evicted)} ({shown}{more}); the latest retired are kept under \"retired\" in "
            "active-constraints.json and this event lists all; a rule every feature must follow belongs in "
            "the spec's description",
            trigger=trigger, evicted=[{"id": item.id, "description": item.description, "featureId": item.feature_id,
                                       "source": item.source} for item in evicted],
        )

    def _category(self, feature_id: str) -> str:
        category = getattr(self.features.get(feature_id), "category", "")
        return category if isinstance(category, str) else ""

    def _failed(self, kind: str, doing: str, exc: Exception, feature_id: str | None, **data: Any) -> None:
        if feature_id is not None:
            data["featureId"] = feature_id
        message = f"{doing} failed: {type(exc).__name__}: {exc}; the run continues"
        self.events.emit(kind, message, error=str(exc), **data)


def _ingest_report(
    stores: ContextStores, feature_id: str, report: AgentReport, category: str, now: int
) -> tuple[int, int]:
    """Add a report's decisions and constraints; returns how many of each were new."""
    decisions = constraints = 0
    for text in report.decisions:
        if add_decision(stores.decisions, text, feature_id, category=category, source="report", now=now):
            decisions += 1
    for text in report.constraints:
        if add_constraint(stores.constraints, text, feature_id, category=category, source="report", now=now):
            constraints += 1
    return decisions, constraints


def _count(result: dict[str, Any], merged: MergeOutcome) -> None:
    result["newDecisions"] += merged.new_decisions
    result["newConstraints"] += merged.new_constraints
    result["newFailures"] += merged.new_failures
    result["retiredDecisions"] += merged.retired_decisions
    result["retiredConstraints"] += merged.retired_constraints
    result["preventions"] += merged.preventions


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
