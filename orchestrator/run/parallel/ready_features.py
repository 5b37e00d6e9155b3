"""Which feature a `--jobs` run starts next.

A feature is ready once every dependency is merged (a passed feature is a merged one here);
ready features go by run order (priority, then spec order), and one that is likely to touch
the same files as a busy feature (the Impact Agent's predictions: `checks/impact_agent/impact`) waits for it
while another can start instead; when nothing else is ready it starts, and the merge queue's
conflict step is the fallback. Features that never can run (a dependency failed or is blocked,
no attempts left) are settled on the way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from orchestrator.run.base.feature_order import blocking_dependency
from orchestrator.spec.feature_spec import Feature
from orchestrator.store.run_state import RunState


@dataclass
class ReadyFeatures:
    """The choice of the next feature, over the run's state and the features at work."""

    run_order: list[Feature]
    selected: set[str]
    state: Callable[[], RunState]
    running: Mapping[str, object]
    """The features whose worker has started and not yet been joined (at work or merging)."""
    attempts_for: Callable[[Feature], int]
    likely_conflict: Callable[[Feature, Feature], bool]
    settle: Callable[[Feature], None]
    """Called for a feature marked blocked or failed here, to record it."""
    waits: Callable[[Feature, Feature], None] = lambda _feature, _holder: None
    """Called for a ready feature held back by a busy one it is likely to clash with."""

    def __post_init__(self) -> None:
        self.by_id = {feature.id: feature for feature in self.run_order}

    def pick(self) -> Feature | None:
        """The next feature to start: ready, by run order, not likely to clash with a busy one if it
        can be; those passed over for it are said to wait (`waits`). When every ready one would
        clash, the first starts anyway: a slot left idle costs more time than the conflict step
        (one model call) costs money, and the merge queue's conflict step is the fallback."""
        ready = self.ready()
        state = self.state()
        # A feature that passed is merged (its worker is only cleaning up): nothing can clash with it.
        busy = [self.by_id[fid] for fid in self.running if state.feature(fid).status != "passed"]
        held: list[tuple[Feature, Feature]] = []
        for feature in ready:
            holder = next((other for other in busy if self.likely_conflict(feature, other)), None)
            if holder is None:
                for waiting, by in held:
                    self.waits(waiting, by)
                return feature
            held.append((feature, holder))
        return ready[0] if ready else None

    def ready(self) -> list[Feature]:
        """Pending features whose dependencies are all merged; settles those that never can run."""
        state = self.state()
        ready: list[Feature] = []
        progress = True
        while progress:
            progress, ready = False, []
            for feature in self.run_order:
                entry = state.feature(feature.id)
                if feature.id in self.running or entry.status != "pending":
                    continue
                reason = blocking_dependency(feature, state, self.selected)
                if reason or entry.attempts >= self.attempts_for(feature):
                    entry.status = "blocked" if reason else "failed"
                    entry.reason = reason or entry.reason or "no attempts left"
                    self.settle(feature)
                    progress = True
                elif all(state.feature(dep).status == "passed" for dep in feature.depends_on):
                    ready.append(feature)
        return ready

    def awaited(self, feature_id: str) -> bool:
        """Whether a feature not started yet depends on `feature_id` (`worker_slots`)."""
        state = self.state()
        return any(feature_id in feature.depends_on and feature.id not in self.running
                   and state.feature(feature.id).status == "pending" for feature in self.run_order)

