"""The order of work: keep state in step with the spec, pick the next runnable feature."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from orchestrator.spec.feature_spec import Feature, FeatureSpec
from orchestrator.store.run_state import RESUMED_AFTER_INTERRUPT, RunState

REVIEWED = "retried after its check was reported defective"
DONE = {"passed", "failed", "blocked", "skipped", "needs_review"}


def reconcile(
    state: RunState, spec: FeatureSpec, resets: Sequence[str], on_warning: Callable[[str], None]
) -> None:
    """Bring state in line with the spec.

    New features become pending (or passed when the quickstart format says `passes: true`);
    a feature whose text changed keeps its status (unless reset) with a warning; `--reset ID`
    makes a feature pending with its attempts cleared; an interrupted feature (in_progress)
    goes back to pending with the attempts it used. Features gone from the spec are kept.
    """
    for feature in spec.features:
        known = feature.id in state.features
        entry = state.feature(feature.id)
        text_hash = feature.text_hash()
        if not known:
            entry.text_hash = text_hash
            if feature.passes:
                entry.status = "passed"
                entry.reason = "marked passes: true in the spec"
            continue
        changed = entry.text_hash and entry.text_hash != text_hash and feature.id not in resets
        if changed and entry.status == "passed":
            on_warning(
                f"feature {feature.id} changed in the spec since it passed; keeping it passed "
                f"(run with --reset {feature.id} to redo it)"
            )
        entry.text_hash = text_hash
        if entry.status == "in_progress":
            entry.status = "pending"
            entry.reason = RESUMED_AFTER_INTERRUPT
        if entry.status == "regressed":
            # Its check failed on a later tree: rebuilt with fresh attempts, the failure fed back.
            entry.status, entry.attempts, entry.reopened = "pending", 0, True
        if entry.status == "blocked":
            # Recomputed each run: the dependency may have been reset or fixed.
            entry.status = "pending"
            entry.reason = None
        if entry.status == "needs_review":
            # A person has had the chance to fix its check: fresh attempts, the old failure not fed back.
            entry.status, entry.attempts, entry.last_verification = "pending", 0, None
            entry.reason = REVIEWED
    for feature_id in resets:
        entry = state.feature(feature_id)
        entry.status = "pending"
        entry.attempts = 0
        entry.last_verification = None
        entry.reopened = False
        entry.reason = "reset with --reset"
        entry.started_at = entry.completed_at = None


def ordered(spec: FeatureSpec, selected: Sequence[str]) -> list[Feature]:
    """Selected features in run order: spec order, moved by `priority` (smaller first, unset = 0)."""
    wanted = set(selected)
    indexed = [(i, f) for i, f in enumerate(spec.features) if f.id in wanted]
    indexed.sort(key=lambda pair: (pair[1].priority or 0, pair[0]))
    return [f for _, f in indexed]


def blocking_dependency(feature: Feature, state: RunState, selected: set[str]) -> str | None:
    """Why the feature can never run in this run, or None if it still may."""
    for dep in feature.depends_on:
        dep_state = state.features.get(dep)
        status = dep_state.status if dep_state else "pending"
        if status == "needs_review":
            return f"dependency {dep} needs review: its check was reported defective"
        if status in ("failed", "blocked", "skipped"):
            return f"dependency {dep} is {status}"
        if status != "passed" and dep not in selected:
            return f"dependency {dep} has not passed and is not selected in this run"
    return None


class RunQueue:
    """The selected features in run order, picked from again and again during one run.

    While a run goes on, a feature's status only ever moves away from `pending` (`reconcile`,
    which may move it back, runs before the loop starts). So the features before the first
    pending one are settled for good, and each pick starts its scan there: picking through a
    run of n features costs O(n) in all rather than O(n) per pick. Make a new queue for
    each run, after `reconcile`.
    """

    def __init__(self, run_order: Sequence[Feature]) -> None:
        self.run_order = list(run_order)
        self.selected = {f.id for f in self.run_order}
        self._first_pending = 0

    def next(
        self, state: RunState, attempts_for: Callable[[Feature], int]
    ) -> tuple[Feature | None, list[Feature]]:
        """The first pending feature in run order whose dependencies have all passed, and the
        features this pick settled without running them (blocked, or out of attempts), in run order."""
        settled: list[tuple[int, Feature]] = []
        progress = True
        while progress:
            progress = False
            self._skip_settled(state)
            for index in range(self._first_pending, len(self.run_order)):
                feature = self.run_order[index]
                entry = state.feature(feature.id)
                if entry.status != "pending":
                    continue
                reason = blocking_dependency(feature, state, self.selected)
                if reason:
                    entry.status = "blocked"
                    entry.reason = reason
                    settled.append((index, feature))
                    progress = True  # may block its own dependents in turn
                    continue
                if entry.attempts >= attempts_for(feature):
                    entry.status = "failed"
                    entry.reason = entry.reason or "no attempts left"
                    settled.append((index, feature))
                    progress = True
                    continue
                if all(state.feature(dep).status == "passed" for dep in feature.depends_on):
                    return feature, _in_run_order(settled)
        return None, _in_run_order(settled)

    def _skip_settled(self, state: RunState) -> None:
        order = self.run_order
        while self._first_pending < len(order) and state.feature(order[self._first_pending].id).status != "pending":
            self._first_pending += 1


def _in_run_order(settled: list[tuple[int, Feature]]) -> list[Feature]:
    # A later pass may settle a feature that comes before one settled in an earlier pass.
    return [feature for _, feature in sorted(settled, key=lambda pair: pair[0])]
