"""The run's books: its state, the journal every change goes to, and the money spent.

Every change to a feature is journaled with the spend up to that moment (`record`): the
journal's spend lines add to what its last record says, so each record must say all of it.
"""

from __future__ import annotations

import threading
import time

from orchestrator.llm.costs.spend import Spend
from orchestrator.store.run_state import FeatureState, RunState
from orchestrator.store.state import StateStore

# `--jobs N`: workers count completed features while the run hands some to the summarizer.
_SCHEDULE_LOCK = threading.Lock()


class RunBooks:
    """The state of one run, with its store and its spend."""

    def __init__(self, store: StateStore, spend: Spend, *, state: RunState | None = None) -> None:
        self.store = store
        self.spend = spend  # the current feature's spend, and the run's counter (`spend.run`: with --jobs N, shared)
        self.state = state if state is not None else RunState()  # a worker's books: the run's state

    def start_spend(self) -> None:
        """Count on from the spend a previous run recorded."""
        self.spend.run.restore(self.state.totals)

    def record(self, feature_id: str | None = None, *, fsync: bool = True) -> None:
        """Journal a change to one feature with the money spent up to now."""
        self.book_totals()
        if feature_id is not None and feature_id == self.spend.feature_id:
            entry = self.state.feature(feature_id)
            entry.tokens, entry.cost_usd = self.spend.feature_tokens, self.spend.feature_cost_usd
        self.store.record(self.state, feature_id, fsync=fsync)

    def book_totals(self) -> None:
        self.state.totals = self.spend.run.snapshot()

    def start_feature(self, feature_id: str) -> None:
        """Count the agent's calls from now on to `feature_id`, on top of what it spent before."""
        entry = self.state.feature(feature_id)
        self.spend.feature_id = feature_id
        self.spend.feature_tokens, self.spend.feature_cost_usd = entry.tokens, entry.cost_usd

    def book_feature(self, entry: FeatureState, clock: float, base_duration: int) -> None:
        """The feature's spend and time so far (`clock` is when this run started it)."""
        entry.tokens, entry.cost_usd = self.spend.feature_tokens, self.spend.feature_cost_usd
        entry.duration_ms = base_duration + int((time.monotonic() - clock) * 1000)
        self.book_totals()

    def count_completed(self, feature_id: str) -> None:
        """Count a feature that passed or failed for the next summary (saved with its status)."""
        schedule = self.state.summarization
        with _SCHEDULE_LOCK:
            if feature_id not in schedule.unsummarized:
                schedule.unsummarized.append(feature_id)
                schedule.completed_since_summary += 1

    def summarized(self, feature_ids: list[str]) -> None:
        """`feature_ids` were summarized: what completed meanwhile waits for the next summary."""
        schedule = self.state.summarization
        with _SCHEDULE_LOCK:
            done = set(feature_ids)
            schedule.unsummarized = [x for x in schedule.unsummarized if x not in done]
            schedule.completed_since_summary = len(schedule.unsummarized)

    def status(self, feature_id: str) -> str:
        entry = self.state.features.get(feature_id)
        return entry.status if entry else "pending"
