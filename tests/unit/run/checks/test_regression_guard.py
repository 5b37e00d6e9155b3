"""The regression guard's choice of checks, the assessment's file names, and running checks at once."""

from __future__ import annotations

from pathlib import Path

from orchestrator.run.checks.assessment import named_files
from orchestrator.run.checks.guard.regression import RegressionGuard
from orchestrator.run.checks.running.check_pool import check_runner
from orchestrator.spec.feature_spec import FeatureSpec
from orchestrator.store.records import Footprint
from orchestrator.store.run_state import FeatureState, RunState
from tests.environments import unsandboxed


def _setup() -> tuple[FeatureSpec, RunState]:
    spec = FeatureSpec.model_validate({"project": "p", "features": [
        {"id": "a", "name": "a", "category": "c", "description": "d", "verify": "true"},
        {"id": "b", "name": "b", "category": "c", "description": "d", "verify": "true", "depends_on": ["a"]},
        {"id": "c", "name": "c", "category": "c", "description": "d", "verify": "true"},
        {"id": "d", "name": "d", "category": "c", "description": "d", "verify": "true", "depends_on": ["b"]},
    ]})
    state = RunState()
    state.features["a"] = FeatureState(status="passed", footprint=Footprint(changed=["a.py"]))
    state.features["b"] = FeatureState(status="passed", footprint=Footprint(changed=["b.py"], check=["test_b.py"]))
    state.features["c"] = FeatureState(status="passed", footprint=Footprint(changed=["c.py"]))
    return spec, state


def test_affected_is_the_footprints_met_plus_transitive_dependencies() -> None:
    spec, state = _setup()
    guard = RegressionGuard(spec, state, mode="affected", concurrency=2, runner=check_runner(unsandboxed(Path.cwd())))
    assert guard.targets(spec.feature("d"), ["test_b.py"]) == ["a", "b"]
    assert guard.targets(spec.feature("d"), ["c.py"]) == ["a", "b", "c"]
    assert RegressionGuard(spec, state, mode="all", concurrency=1, runner=check_runner(unsandboxed(Path.cwd()))).targets(
        spec.feature("c"), []) == ["a", "b"]
    assert RegressionGuard(spec, state, mode="none", concurrency=1, runner=check_runner(unsandboxed(Path.cwd()))).targets(
        spec.feature("d"), ["a.py"]) == []


def test_file_names_in_a_description() -> None:
    assert named_files("Edit src/app.py and README.md, not version 1.2 or https://x.io/a") == {"src/app.py", "README.md"}
