"""`--jobs N`: the every-5 summarization in a thread of its own, so the run goes on meanwhile.

The summarizer's call takes as long as any model call. Made from the run's loop it would keep
finished workers from being replaced and merged features from freeing their dependents until
it returned. Here the loop starts it and carries on; at most one runs at a time, and the run
waits for it (or, when stopping, gives up on it after the grace period) at its end. The end
summary runs here too, beside the final verification: it folds the features' reports, which
the final verification does not change, and each takes about as long as the other. A killed summary is redone: its features stay unsummarized in
the state until it has written its result.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection, Sequence

from orchestrator.spec.feature_spec import Feature
from orchestrator.store.run_state import SETTLED_STATUSES, RunState


def worth_summarizing(state: RunState, run_order: Sequence[Feature], running: Collection[str], jobs: int) -> bool:
    """Whether a due every-N summary would inform a prompt: False once every feature left starts
    at once (a busy worker whose feature has settled is about to free its slot), since the end
    summary folds the same features then. True while one still waits for a dependency."""
    waiting = [f for f in run_order if state.feature(f.id).status == "pending" and f.id not in running]
    if any(state.feature(dep).status != "passed" for feature in waiting for dep in feature.depends_on):
        return True
    working = sum(state.feature(feature_id).status not in SETTLED_STATUSES for feature_id in running)
    return len(waiting) > jobs - working


class BackgroundSummary:
    """One summarization at a time, off the run's thread."""

    def __init__(self, summarize: Callable[[str], None]) -> None:
        self._summarize = summarize
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    @property
    def busy(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, trigger: str) -> bool:
        """Start summarizing (False, nothing started, while one still runs); raises what a finished one raised."""
        if self.busy:
            return False
        self._raise_error()
        self._thread = threading.Thread(target=self._run, args=(trigger,), name="orchestrate:summary", daemon=True)
        self._thread.start()
        return True

    def start_after(self, trigger: str) -> None:
        """Start summarizing as soon as the one running (if any) is done: the run's end summary,
        beside the final verification. Not if that one raised (`wait` raises it)."""
        previous = self._thread

        def after_previous() -> None:
            if previous is not None:
                previous.join()
            if self._error is None:
                self._run(trigger)

        self._thread = threading.Thread(target=after_previous, name="orchestrate:summary", daemon=True)
        self._thread.start()

    def wait(self, deadline: float | None = None) -> bool:
        """Wait for the running one (until `deadline`, a `time.monotonic()` value): True once none runs."""
        if self._thread is not None:
            self._thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
        if self.busy:
            return False
        self._raise_error()
        return True

    def wait_when_stopping(self, deadline: float) -> bool:
        """`wait`, when the run stops for another reason: what the summary raised (also the stop
        itself, met at its model call) must not take the place of that reason."""
        try:
            return self.wait(deadline)
        except BaseException:
            return True

    def _run(self, trigger: str) -> None:
        try:
            self._summarize(trigger)
        except BaseException as err:  # handed to the run's thread
            self._error = err

    def _raise_error(self) -> None:
        error, self._error = self._error, None
        if error is not None:
            raise error
