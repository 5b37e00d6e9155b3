"""The run's books shared by `--jobs N` workers: one state store, one lock, one way to close.

Every worker journals its feature's changes and its calls' money into the same state journal;
`SharedStateStore` serializes those writes (one valid line each), and `freeze` ends them when the
run gives up waiting for a worker that is stuck in a long model call or check: from then on
only the thread that froze it writes, so the final snapshot is the last word.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from orchestrator.llm.spend import SpendEntry
from orchestrator.store.paths import ProjectPaths
from orchestrator.store.run_state import RunState
from orchestrator.store.state import StateStore


class SharedStateStore(StateStore):
    """A `StateStore` that several threads write through, one write at a time."""

    def __init__(self, paths: ProjectPaths, on_warning: Callable[[str], None] = lambda _m: None) -> None:
        super().__init__(paths, on_warning)
        self.lock = threading.RLock()
        self._owner: int | None = None  # once frozen: the only thread still heard

    def freeze(self) -> None:
        """From now on, writes from any thread but this one are dropped."""
        with self.lock:
            self._owner = threading.get_ident()

    def _heard(self) -> bool:
        return self._owner is None or self._owner == threading.get_ident()

    def save(self, state: RunState) -> None:
        with self.lock:
            if self._heard():
                super().save(state)

    def record(self, state: RunState, feature_id: str | None = None, *, fsync: bool = True) -> None:
        with self.lock:
            if self._heard():
                super().record(state, feature_id, fsync=fsync)

    def record_spend(self, spend: SpendEntry) -> None:
        with self.lock:
            if self._heard():
                super().record_spend(spend)
