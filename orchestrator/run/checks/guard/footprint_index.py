"""Which features' footprints may hold a file: the regression guard's look-up, so that finding
the features a change affects costs what the change touched, not the number of features
passed (a scan of 10,000 entries, twice a feature, was the one cost of a long run that grew).

The index is a superset: a file stays listed under a feature whose footprint later lost it,
and the guard checks every hit against the state as it is. It is built from the state on
first use (a resumed run's passed features) and then kept up to date from the features the
guard is asked about, the only ones whose footprint can change during the run (a feature job
assesses its feature before it works, and its footprint is set when it passes): each is read
again at every look-up until a look-up finds it settled without its having been asked about
since the one before. A feature's status is read before its footprint, and a pass sets the
footprint before the status (`feature_job`), so a look-up in another thread that finds the
status settled finds the footprint that goes with it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from orchestrator.store.run_state import SETTLED_STATUSES, FeatureState, RunState


class FootprintIndex:
    """File -> ids of the features whose footprint held it when last read; safe across threads."""

    def __init__(self, state: RunState) -> None:
        self.state = state
        # One id (most files belong to one feature) or a set of them: a set per file would be
        # 216 bytes a feature at 10,000 features, where the peak memory target is 200 MB.
        self._by_file: dict[str, str | set[str]] = {}
        self._unsettled: set[str] = set()  # asked about, and not yet read settled since
        self._asked: set[str] = set()  # asked about since the last look-up
        self._built = False
        self._lock = threading.Lock()

    def watch(self, feature_id: str) -> None:
        """`feature_id` is at work: its footprint may change until it settles."""
        with self._lock:
            self._unsettled.add(feature_id)
            self._asked.add(feature_id)

    def meeting(self, files: Iterable[str]) -> set[str]:
        """Ids whose footprint may hold one of `files` (check each against the state)."""
        with self._lock:
            self._refresh()
            found: set[str] = set()
            for path in files:
                ids = self._by_file.get(path)
                if isinstance(ids, str):
                    found.add(ids)
                elif ids:
                    found.update(ids)
            return found

    def _refresh(self) -> None:
        if not self._built:
            for feature_id, entry in list(self.state.features.items()):  # one step: other threads add entries
                self._add(feature_id, entry)
            self._built = True
        for feature_id in list(self._unsettled):
            current = self.state.features.get(feature_id)
            if current is None:
                continue
            settled = current.status in SETTLED_STATUSES  # before the footprint: see the module
            self._add(feature_id, current)
            if settled and feature_id not in self._asked:
                self._unsettled.discard(feature_id)
        self._asked.clear()

    def _add(self, feature_id: str, entry: FeatureState) -> None:
        if entry.footprint is None:
            return
        for path in (*entry.footprint.changed, *entry.footprint.check):
            ids = self._by_file.get(path)
            if ids is None:
                self._by_file[path] = feature_id
            elif isinstance(ids, str):
                if ids != feature_id:
                    self._by_file[path] = {ids, feature_id}
            else:
                ids.add(feature_id)
