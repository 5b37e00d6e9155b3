"""The Impact Agent: each pending feature's footprint foreseen before it starts, and compared
with the truth once it passed.

A `Prediction` holds three lists, all deterministic (no model call):
- `writes`: the files the feature's description and acceptance criteria name (what it is
  expected to change);
- `builds_on`: its dependencies' footprints (what they changed and what their checks read);
- `reads`: the files the checks it will re-run read: its own check's files (as found at its
  first attempt, or as its command names them) and those of the passed features whose checks
  the regression guard would re-run after it.
The optional model call (`impact_model`) adds `by_model`. Every pending feature of a run is
predicted when the run starts and again when it starts (its dependencies' footprints are
known by then), so `orchestrate context FEATURE` shows what the run would schedule by.

Two features whose `will_write` sets meet are not run at once under `--jobs`
(`parallel/ready_features`). A passed feature's changed files are compared with its prediction:
`hits` of `changed` were foreseen, and the run's hit rate is their sum over the features
(`orchestrator.store.run_state.hit_rate`, which `orchestrate status` shows too). A merge conflict that happens anyway is recorded on the feature (`record_conflict`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from orchestrator.run.checks.assessment import named_files
from orchestrator.run.checks.guard.regression import RegressionGuard, dependencies_of
from orchestrator.spec.feature_spec import Feature, FeatureSpec
from orchestrator.store.records import ConflictMiss, Prediction
from orchestrator.store.run_state import FeatureState, RunState

Affected = Callable[[Feature, set[str]], list[str]]
MAX_MISSED = 10  # changed files not foreseen, kept per feature (the count is exact)
MAX_CONFLICTS = 5  # conflicts recorded per feature


def predict(
    feature: Feature, spec: FeatureSpec, state: RunState, guard: RegressionGuard, *, affected: Affected | None = None,
) -> Prediction:
    """`feature`'s footprint as the state stands now (the model's part of an earlier one is kept,
    and the conflicts it recorded).
    `affected`: the passed features whose checks re-run after a change (default: the guard's choice)."""
    writes = named_files(" ".join([feature.description, *feature.acceptance]))
    builds_on: set[str] = set()
    for dep in dependencies_of(spec, feature):
        entry = state.features.get(dep)
        if entry is not None and entry.footprint is not None:
            builds_on |= entry.footprint.files()
    own = state.features.get(feature.id)
    command = spec.check_command(feature)
    reads = set(own.check_files.files) if own and own.check_files else named_files(command or "")
    for fid in (affected or guard.targets)(feature, writes | builds_on):
        passed = state.features.get(fid)
        if passed is not None and passed.footprint is not None:
            reads |= set(passed.footprint.check)
    earlier = own.prediction if own else None
    return Prediction(
        writes=sorted(writes), builds_on=sorted(builds_on - writes), reads=sorted(reads - writes - builds_on),
        by_model=earlier.by_model if earlier else [], conflicts=earlier.conflicts if earlier else [],
    )


def predict_pending(spec: FeatureSpec, state: RunState, guard: RegressionGuard, ids: Iterable[str]) -> None:
    """Predict every feature of `ids` that has not passed (the run's start). The passed features a
    change meets come from one index of their footprints built here: the guard's own look-up
    watches each feature asked about until it settles, which for every pending feature at once
    would cost the run's length squared."""
    meeting: dict[str, list[str]] = {}
    for fid, entry in list(state.features.items()):
        if entry.status == "passed" and entry.footprint is not None:
            for path in entry.footprint.files():
                meeting.setdefault(path, []).append(fid)

    def affected(_feature: Feature, files: set[str]) -> list[str]:
        return sorted({fid for path in files for fid in meeting.get(path, ())})

    for feature_id in ids:
        entry = state.feature(feature_id)
        if entry.status != "passed":
            entry.prediction = predict(spec.feature(feature_id), spec, state, guard, affected=affected)


def score(entry: FeatureState) -> None:
    """Compare a passed feature's prediction with the files it changed (its footprint)."""
    if entry.prediction is None or entry.footprint is None:
        return
    changed = set(entry.footprint.changed)
    foreseen = entry.prediction.files()
    missed = sorted(changed - foreseen)
    entry.prediction.changed, entry.prediction.hits = len(changed), len(changed) - len(missed)
    entry.prediction.missed = missed[:MAX_MISSED]


def shared_writes(state: RunState, a: str, b: str) -> set[str]:
    """The files both features are predicted to change (none when either has no prediction)."""
    first, second = state.features.get(a), state.features.get(b)
    if first is None or second is None or first.prediction is None or second.prediction is None:
        return set()
    return first.prediction.will_write() & second.prediction.will_write()


def record_conflict(state: RunState, feature_id: str, files: list[str]) -> ConflictMiss:
    """A merge conflict of `feature_id` in `files`: which features merged meanwhile changed them,
    and whether the predictions had foreseen it. Recorded on the feature's prediction."""
    entry = state.feature(feature_id)
    since = entry.started_at or 0
    conflicting = set(files)
    others = sorted(
        fid for fid, other in list(state.features.items())
        if fid != feature_id and other.status == "passed" and other.footprint is not None
        and (other.completed_at or 0) >= since and conflicting & set(other.footprint.changed)
    )
    foreseen = any(shared_writes(state, feature_id, other) & conflicting for other in others)
    miss = ConflictMiss(files=sorted(conflicting), with_features=others, foreseen=foreseen)
    if entry.prediction is None:
        entry.prediction = Prediction()
    if len(entry.prediction.conflicts) < MAX_CONFLICTS:
        entry.prediction.conflicts.append(miss)
    return miss


def conflict_text(feature_id: str, miss: ConflictMiss) -> str:
    """The warning a conflict the prediction missed (or could not avoid) gets."""
    files, others = ", ".join(miss.files), ", ".join(miss.with_features) or "a feature merged meanwhile"
    if miss.foreseen:
        return f"{feature_id}: merge conflict in {files} with {others}, foreseen (they ran together: nothing else was ready)"
    return f"{feature_id}: merge conflict in {files} with {others}: the footprint prediction missed it"
