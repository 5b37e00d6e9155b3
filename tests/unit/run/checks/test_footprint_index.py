"""The guard's footprint index finds exactly what a scan of every passed feature finds, however
footprints, statuses and entries change along a run (issue 29: the scan was the one cost of a
10,000-feature run that grew with its length)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.run.checks.guard.regression import RegressionGuard, _shared, dependencies_of
from orchestrator.run.checks.running.check_pool import check_runner
from orchestrator.spec.feature_spec import Feature, FeatureSpec
from orchestrator.store.records import Footprint
from orchestrator.store.run_state import FeatureState, RunState
from tests.environments import unsandboxed

COUNT = 8
FILES = ["a.py", "b.py", "c.py", "shared.py", "README.md"]
SPEC = FeatureSpec.model_validate({"project": "p", "features": [
    {"id": f"f{i}", "name": "n", "category": "c", "description": "d", "verify": f"true {i}",
     **({"depends_on": [f"f{i - 1}"]} if i % 3 == 2 else {})} for i in range(COUNT)]})


def _scan(state: RunState, feature: Feature, touched: set[str]) -> list[str]:
    """What the guard found before the index: every passed feature of the spec, one by one."""
    deps = dependencies_of(SPEC, feature)
    return [other.id for other in SPEC.features
            if (entry := state.features.get(other.id)) is not None and entry.status == "passed"
            and other.id != feature.id and (_shared(entry.footprint, touched) or other.id in deps)]


feature_ids = st.sampled_from([f"f{i}" for i in range(COUNT)])
file_sets = st.lists(st.sampled_from(FILES), max_size=3)
# What happens to a feature: a job (asked about, then settled with a footprint), a regression
# found by final verification, or an entry replaced wholesale (as `combine` lands a shard's).
steps = st.lists(st.tuples(st.sampled_from(["job", "regressed", "replaced"]), feature_ids, file_sets,
                           st.sampled_from(["passed", "failed"])), max_size=12)


@settings(max_examples=150, deadline=None)
@given(resumed=st.dictionaries(feature_ids, file_sets, max_size=4), run=steps, touched=file_sets)
def test_the_index_finds_what_a_scan_finds(tmp_path_factory, resumed, run, touched) -> None:
    state = RunState()
    for fid, files in resumed.items():  # a resumed run: passed before the guard existed
        state.features[fid] = FeatureState(status="passed", footprint=Footprint(changed=files))
    guard = RegressionGuard(SPEC, state, mode="affected", concurrency=1,
                            runner=check_runner(unsandboxed(Path(tmp_path_factory.mktemp("p")))))
    for kind, fid, files, outcome in run:
        feature = SPEC.feature(fid)
        if kind == "job":
            guard.targets(feature, files)  # the assessment, before the attempt
            entry = state.feature(fid)
            entry.status = outcome
            if outcome == "passed":
                entry.footprint = Footprint(changed=sorted({*files, *(entry.footprint.changed if entry.footprint else [])}))
        elif kind == "regressed":
            state.feature(fid).status = "regressed"
        else:
            guard.plan(feature, files)  # combine re-checks the feature it lands
            state.features[fid] = FeatureState(status="passed", footprint=Footprint(check=files))
        for other in SPEC.features:
            assert guard.targets(other, set(touched)) == _scan(state, other, set(touched))
    every = RegressionGuard(SPEC, state, mode="all", concurrency=1, runner=guard.runner)
    for other in SPEC.features:  # `--regression all`: every passed feature but itself, in spec order
        assert every.targets(other, set(touched)) == [
            f.id for f in SPEC.features if f.id != other.id and state.features.get(f.id, FeatureState()).status == "passed"]
