"""`ContextAgent`: the orchestrator's one handle on project memory.

Every public method catches its own failures, reports them through `on_event` (or stderr),
and degrades: an empty injection, an unrecorded item, a fallback summary. Nothing here may
stop a run. Each call loads the stores from disk and writes back what it changed at once, so
the next feature, a resumed run and `orchestrate context` all see the same memory. An agent's
report is the exception: it is appended to the pending reports (pending.py), which every
load applies on top of the stores, and which the next summarization (summarization.py) folds in.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from context_agent.agent_events import EventHandler, EventReporter
from context_agent.injection.context_injection import ContextInjection
from context_agent.injection.injection_choice import build_injection
from context_agent.interfaces import FeatureLike, ModelCall
from context_agent.memory.pending import append_report, read_pending
from context_agent.memory.store_updates import add_failure, ingest_report, set_prevention
from context_agent.memory.stores import ContextStores, FailureMemory, load_store, load_stores, save_store
from context_agent.memory.summary_notes import add_recent_note, enforce_summary_cap
from context_agent.records.failure_text import default_prevention, describe_check_failure
from context_agent.records.feature_records import FeatureReader
from context_agent.records.logs import read_outcome
from context_agent.records.report_reading import parse_report
from context_agent.summarizer.summarization import SummarizationParts, SummaryResult
from shared_base.check_result import CheckResult
from shared_base.files import ContextFiles
from shared_base.model_ids import DEFAULT_SUMMARIZER_MODEL


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
        read_feature: FeatureReader | None = None,
        redact: Callable[[str], str] | None = None,
    ) -> None:
        """`read_feature` gives the summarizer each feature's record (without it, only the spec's
        names); `redact` is applied to every text written (the orchestrator's secret redaction)."""
        self.files = ContextFiles.for_project(project_root, redact) if redact else ContextFiles.for_project(project_root)
        self.features: dict[str, FeatureLike] = {
            feature.id: feature for feature in features if isinstance(getattr(feature, "id", None), str)
        }
        self.model_call = model_call
        self.summarizer_model = summarizer_model
        self.read_feature = read_feature
        self.events = EventReporter(on_event)
        # Held around every read-modify-write of the stores by whoever shares this agent between
        # threads (`--jobs N`); `summarize` holds it except during the summarizer's call.
        self.lock = threading.RLock()

    # --- injection -------------------------------------------------------------------------

    def get_injection(self, feature_id: str, reserved_tokens: int = 0, files: Collection[str] = ()) -> ContextInjection:
        """The context for `feature_id`: summary, decisions, failures, constraints and
        `token_count` (0 when there is nothing, or when building it failed), within the budget
        less `reserved_tokens` (what the prompt carries beside it that counts against it).
        `files`: what the feature is known to touch; a failure of a feature that has passed
        since is shown only when its files meet these (or those of this feature's own failures)."""
        try:
            return build_injection(self._load(), feature_id, self.features, reserved_tokens=reserved_tokens,
                                   files=files)
        except Exception as exc:
            self._failed("context.injection_failed", f"building the context for {feature_id}", exc, feature_id)
            return ContextInjection(feature_id=feature_id)

    def memory(self) -> ContextStores:
        """The four stores as the next feature's injection sees them: as on disk, with the
        reports recorded since the last summarization applied."""
        return self._load()

    # --- recording as features happen -----------------------------------------------------

    # The report is the agent's `report_feature` input: JSON the model wrote, read leniently.
    def record_report(self, feature_id: str, report: Mapping[str, Any]) -> None:
        """Record the agent's report: its decisions and constraints, and its summary until the
        next summarization folds it in. Seen at once by every later `get_injection`."""
        try:
            # Appended, not fsynced: the feature's log holds the report durably (pending.py).
            append_report(self.files, feature_id, parse_report(report), _now_ms())
        except Exception as exc:
            self._failed("context.record_failed", f"recording the report of {feature_id}", exc, feature_id)

    def record_failure(
        self, feature_id: str, attempt: int, verification: Mapping[str, object] | CheckResult,
        files: Sequence[str] = (),
    ) -> None:
        """Store a failed check (a `CheckResult`, or its camelCase fields); its description
        comes from the check's output. `files`: what the failing attempt changed and its check
        names (relative paths), which decide who sees it once its feature has passed."""
        try:
            check = verification if isinstance(verification, CheckResult) else (
                CheckResult.from_mapping(verification, tail=None))
            memory = load_store(self.files.failure_memory, FailureMemory, self.files, self.events)
            add_failure(
                memory, feature_id, attempt=int(attempt), command=check.command or "", exit_code=check.exit_code,
                description=describe_check_failure(check), prevention=default_prevention(check),
                prevention_source="default", now=_now_ms(), files=files,
            )
            save_store(self.files, "failures", memory)
        except Exception as exc:
            self._failed("context.record_failed", f"recording the failure of {feature_id}", exc, feature_id)

    def record_prevention(self, feature_id: str, prevention: str) -> None:
        """Store what was learned about avoiding the feature's recorded failures."""
        try:
            memory = load_store(self.files.failure_memory, FailureMemory, self.files, self.events)
            if set_prevention(memory, feature_id, str(prevention), "agent"):
                save_store(self.files, "failures", memory)
        except Exception as exc:
            self._failed("context.record_failed", f"recording the prevention for {feature_id}", exc, feature_id)

    # --- summarization ----------------------------------------------------------------------

    def summarize(self, feature_ids: Sequence[str], trigger: str, *, use_model: bool = True) -> SummaryResult:
        """Re-compress memory with one summarizer call over the features since the last one.

        Never raises; on failure the fallback summary is written and `success` is False. With
        `use_model` False (a strategy that never injects the summary) no model is called: the
        stores are folded and the deterministic summary stored, but not returned as `summary`
        ("", so that the working-memory log, which replay sends back with every request, does
        not carry a summary no one asked for).
        """
        ids = [str(feature_id) for feature_id in feature_ids]
        result = SummaryResult(trigger=trigger, feature_ids=ids, model=self.summarizer_model)
        summarization = SummarizationParts(self.files, self.events, self.model_call, self.summarizer_model, self._category)
        try:
            with self.lock:
                now = _now_ms()
                outcomes = [read_outcome(self.read_feature, fid, self.features.get(fid)) for fid in ids]
                request = summarization.request(self._load(), outcomes, trigger) if use_model else None
            # The call is made outside the lock, so other threads record and inject meanwhile; the
            # stores are loaded again after it, with whatever they recorded, before anything is written.
            reply = summarization.call(request) if request is not None else None
            with self.lock:
                summarization.run(self._load(), outcomes, result, use_model, now, reply)
        except Exception as exc:
            result.success = False
            result.error = result.error or f"summarization failed: {exc}"
            self._failed("summarizer.failed", "summarizing", exc, None, trigger=trigger, featureIds=ids)
        return result

    # --- helpers ----------------------------------------------------------------------------

    def _load(self) -> ContextStores:
        """The stores with the reports recorded since the last summarization applied."""
        stores = load_stores(self.files, self.events)
        # After a kill between writing the stores and removing the file, its reports are applied
        # twice: the items are duplicates (no-ops); only a recent note comes back until the next fold.
        pending_reports = read_pending(self.files, self.events)
        for pending in pending_reports:
            ingest_report(stores, pending.feature_id, pending.report, self._category(pending.feature_id),
                          pending.recorded_at)
            add_recent_note(stores.summary, pending.feature_id, pending.report.summary, now=pending.recorded_at,
                            cap=False)
        if pending_reports:
            enforce_summary_cap(stores.summary)
        return stores

    def _category(self, feature_id: str) -> str:
        category = getattr(self.features.get(feature_id), "category", "")
        return category if isinstance(category, str) else ""

    def _failed(self, kind: str, doing: str, exc: Exception, feature_id: str | None, **data: Any) -> None:
        if feature_id is not None:
            data["featureId"] = feature_id
        message = f"{doing} failed: {type(exc).__name__}: {exc}; the run continues"
        self.events.emit(kind, message, error=str(exc), **data)
