"""The regression guard's choice of checks, the assessment's file names, and running checks at once."""

from __future__ import annotations

from pathlib import Path

from orchestrator.run.checks.assessment import named_files
from orchestrator.run.checks.check_pool import check_runner, run_checks
from orchestrator.run.checks.regression import RegressionGuard, broken_result
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


def test_checks_run_at_once_keep_their_order_and_a_failure_names_the_broken_feature(tmp_path: Path) -> None:
    runs = run_checks([("a", "true"), ("b", "echo bad; exit 3"), ("c", "true")], tmp_path, check_runner(unsandboxed(tmp_path), 5.0), 3)
    assert [(run.feature_id, run.success) for run in runs] == [("a", True), ("b", False), ("c", True)]
    result = broken_result([runs[1]], attempt=2)
    assert result.error is not None and result.error.startswith("your change broke feature b")
    assert result.command == "echo bad; exit 3" and "bad" in result.output and not result.success


def test_a_hanging_check_times_out(tmp_path: Path) -> None:
    (run,) = run_checks([("a", "sleep 30")], tmp_path, check_runner(unsandboxed(tmp_path), 0.5), 2)
    assert not run.success and run.result.error == "timed out after 0.5 s"


def test_file_names_in_a_description() -> None:
    assert named_files("Edit src/app.py and README.md, not version 1.2 or https://x.io/a") == {"src/app.py", "README.md"}
