"""One summarization: fold the features since the last one into the stores, with one
summarizer call (or the deterministic fallback), and say what changed (`SummaryResult`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from context_agent.agent_events import EventReporter
from context_agent.budget import MAX_ACTIVE_CONSTRAINTS
from context_agent.interfaces import ModelCall
from context_agent.json_shapes import SummarizerRequest
from context_agent.memory.pending import clear_pending
from context_agent.memory.store_updates import enforce_constraint_limit, ingest_report
from context_agent.memory.stores import Constraint, ContextStores, save_stores
from context_agent.memory.summary_notes import enforce_summary_cap
from context_agent.records.logs import FeatureOutcome
from context_agent.summarizer.fallback import fallback_summary
from context_agent.summarizer.merge import MemoryMergeOutcome, merge_answer, summary_rejection
from context_agent.summarizer.summarizer_call import SummarizerError, build_request, parse_answer
from shared_base.files import ContextFiles
from shared_base.tokens import estimate_tokens

_EVICTED_NAMED = 10  # constraints named in the eviction message; the event's data lists all


class SummaryResult(BaseModel):
    """What `ContextAgent.summarize` did, for the event log and the working-memory log."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    success: bool = False
    """False when the fallback summary was written because the summarizer failed."""
    error: str | None = None
    trigger: str
    feature_ids: list[str] = Field(default_factory=list)
    source: Literal["model", "fallback"] = "fallback"
    model: str | None = None
    summary: str = ""
    """The stored summary; "" when no model was asked for one (`use_model` False)."""
    summary_tokens: int = 0
    new_decisions: int = 0
    new_failures: int = 0
    new_constraints: int = 0
    retired_decisions: int = 0
    retired_constraints: int = 0
    evicted_constraints: int = 0
    renewed_decisions: int = 0
    """Stored decisions the summarizer said it restated (`restates`): renewed, not added."""
    renewed_constraints: int = 0
    preventions: int = 0

    def count(self, merged: MemoryMergeOutcome) -> None:
        """Add what merging the summarizer's answer changed."""
        self.new_decisions += merged.new_decisions
        self.new_constraints += merged.new_constraints
        self.new_failures += merged.new_failures
        self.retired_decisions += merged.retired_decisions
        self.retired_constraints += merged.retired_constraints
        self.renewed_decisions += merged.renewed_decisions
        self.renewed_constraints += merged.renewed_constraints
        self.preventions += merged.preventions


@dataclass
class SummarizationParts:
    """The parts one summarization works with, handed over by `ContextAgent`."""

    files: ContextFiles
    events: EventReporter
    model_call: ModelCall | None
    summarizer_model: str
    category_of: Callable[[str], str]

    def request(
        self, stores: ContextStores, outcomes: list[FeatureOutcome], trigger: str
    ) -> SummarizerRequest | Exception:
        """The summarizer call's keyword arguments, or why there can be no call (kept, not raised)."""
        if self.model_call is None:
            return SummarizerError("no summarizer model is configured")
        try:
            return build_request(self.summarizer_model, stores, outcomes, trigger)
        except Exception as exc:
            return exc

    def call(self, request: SummarizerRequest | Exception) -> object:
        """The summarizer's reply to `request`, or the exception that stood in its way (kept, not raised)."""
        if isinstance(request, Exception) or self.model_call is None:
            return request
        try:
            return self.model_call(**request)
        except Exception as exc:
            return exc

    def run(self, stores: ContextStores, outcomes: list[FeatureOutcome], result: SummaryResult,
            use_model: bool, now: int, reply: object = None) -> None:
        """Fold `outcomes` into `stores` and write them; fills `result`. `reply` is the summarizer's
        answer (or the exception its call raised), asked for by `call` beforehand."""
        # Reports in the logs are merged first (duplicates are no-ops), so a report that never
        # reached record_report, e.g. after a crash, is not lost whatever the summarizer does.
        for outcome in outcomes:
            added = ingest_report(stores, outcome.id, outcome.report, self.category_of(outcome.id), now)
            result.new_decisions += added[0]
            result.new_constraints += added[1]
        notes = {note.feature_id: note.summary for note in stores.summary.recent}
        if not use_model:
            result.success, result.model = True, None
            self._fold(stores, fallback_summary(stores.summary.summary, outcomes, notes), result, now)
            result.summary = ""
            return
        new_summary = self._take_answer(reply, stores, result, now)
        if new_summary is None:
            new_summary = fallback_summary(stores.summary.summary, outcomes, notes)
        self._fold(stores, new_summary, result, now)

    def _take_answer(self, reply: object, stores: ContextStores, result: SummaryResult, now: int) -> str | None:
        """The summarizer's new summary, its items merged into `stores`; None when it failed
        or its summary was rejected."""
        trigger = result.trigger
        try:
            if isinstance(reply, Exception):
                raise reply
            answer = parse_answer(reply)
            merged = merge_answer(
                stores, answer, set(result.feature_ids), category_of=self.category_of,
                by=f"summarizer:{trigger}", now=now,
            )
            result.count(merged)
            if merged.unknown_restates:
                self._report_unknown_restates(merged.unknown_restates, trigger)
            result.success = True
            rejection = summary_rejection(answer.summary)
            if rejection is None:
                result.source = "model"
                return answer.summary.strip()
            self.events.emit(
                "summarizer.summary_rejected",
                f"kept the previous summary and added the new features to it: {rejection}",
                reason=rejection, trigger=trigger,
            )
        except Exception as exc:
            result.error = (
                str(exc) if isinstance(exc, SummarizerError)
                else f"summarizer call failed: {type(exc).__name__}: {exc}"
            )
            self.events.emit(
                "summarizer.failed",
                f"{result.error}; wrote a deterministic summary from the logs instead",
                error=result.error, trigger=trigger, featureIds=result.feature_ids,
            )
        return None

    def _fold(self, stores: ContextStores, summary: str, result: SummaryResult, now: int) -> None:
        """Write the new summary and the stores, within their limits; the pending reports are
        in the stores from then on."""
        self._store_summary(stores, summary, result, now)
        evicted = enforce_constraint_limit(stores.constraints, now=now)
        if evicted:
            result.evicted_constraints = len(evicted)
            self._report_evicted(evicted, result.trigger)
        save_stores(self.files, stores)
        clear_pending(self.files)

    def _store_summary(self, stores: ContextStores, text: str, result: SummaryResult, now: int) -> None:
        summary = stores.summary
        summary.summary = text
        summary.source = result.source
        summary.model = self.summarizer_model if result.source == "model" else None
        summary.trigger, summary.updated_at = result.trigger, now
        summary.features_summarized += len(result.feature_ids)
        done = set(result.feature_ids)
        summary.recent = [note for note in summary.recent if note.feature_id not in done]
        enforce_summary_cap(summary)
        result.summary = summary.summary
        result.summary_tokens = estimate_tokens(summary.summary)

    def _report_unknown_restates(self, ids: list[str], trigger: str) -> None:
        self.events.emit(
            "summarizer.unknown_restates",
            f"the summarizer said {len(ids)} item(s) restate stored ids that do not exist "
            f"({', '.join(ids)}); they were taken as new items",
            ids=ids, trigger=trigger,
        )

    def _report_evicted(self, evicted: list[Constraint], trigger: str) -> None:
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
