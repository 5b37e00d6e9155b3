"""The N of `--jobs N`: how many features may be at work (model calls, tools, checks) at once.

A feature whose check passed in its worktree gives its slot up while it waits in the merge
queue and is merged: that is git's and the re-check's time, not the model's, and the next
feature can start meanwhile (up to N such waiting features: `WorkerSlots.free`). Unless a feature not started yet depends on it: then it keeps the
slot until it has passed, so that the dependent (on the critical path) gets it rather than a
feature further down the run order. If the merge fails (a conflict, a failed re-check), the
feature takes a slot again for its next attempt, ahead of any feature not started yet; until
one is free, it waits.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

_POLL_SECONDS = 0.05  # how often a feature waiting for its slot back looks whether the run stops


class WorkerSlots:
    """Which features are at work and which are merging; thread-safe."""

    def __init__(self, jobs: int, on_free: Callable[[], None], awaited: Callable[[str], bool] = lambda _id: False) -> None:
        self.jobs = jobs
        self._on_free = on_free  # wakes the run's loop: a slot came free, or a dependency passed
        self._awaited = awaited  # whether a feature not started yet depends on this one
        self._changed = threading.Condition()
        self._working: set[str] = set()
        self._merging: set[str] = set()
        self._wanting_back: set[str] = set()

    def free(self) -> int:
        """Slots a feature not started yet may take now (those waiting to come back go first).

        At most N features wait in the merge queue without holding a slot; the ones past that
        hold one. A queue slower than the workers would otherwise grow without end, each new
        feature starting from a branch further behind the one it lands on: every conflict
        larger (a focused step's tokens grew with the backlog) and every batch and its re-check
        longer, so that a long run's late features cost several times its early ones."""
        with self._changed:
            backlog = max(0, len(self._merging) - self.jobs)
            return self.jobs - len(self._working) - len(self._wanting_back) - backlog

    def at_work(self) -> set[str]:
        with self._changed:
            return set(self._working)

    def started(self, feature_id: str) -> None:
        with self._changed:
            self._working.add(feature_id)

    def merging(self, feature_id: str) -> None:
        """`feature_id` goes to the merge queue: its slot is free, unless a dependent awaits it."""
        if self._awaited(feature_id):
            return
        self._release(feature_id)

    def passed(self, feature_id: str) -> None:
        """`feature_id` is merged and recorded as passed: its dependents may start now, before its
        worker has cleaned up (in its slot, if it kept it)."""
        self._release(feature_id)

    def back_to_work(self, feature_id: str, should_stop: Callable[[], bool]) -> None:
        """`feature_id` needs a slot again (its merge failed); KeyboardInterrupt if the run stops meanwhile."""
        with self._changed:
            if feature_id in self._working:  # it kept its slot
                return
            self._merging.discard(feature_id)
            self._wanting_back.add(feature_id)
            try:
                while len(self._working) >= self.jobs:
                    if should_stop():
                        raise KeyboardInterrupt("the run is stopping")
                    self._changed.wait(_POLL_SECONDS)
                self._working.add(feature_id)
            finally:
                self._wanting_back.discard(feature_id)

    def ended(self, feature_id: str) -> None:
        """`feature_id`'s worker is done, whatever became of it."""
        with self._changed:
            self._working.discard(feature_id)
            self._merging.discard(feature_id)
            self._wanting_back.discard(feature_id)
            self._changed.notify_all()

    def _release(self, feature_id: str) -> None:
        with self._changed:
            self._working.discard(feature_id)
            self._merging.add(feature_id)
            self._changed.notify_all()
        self._on_free()
