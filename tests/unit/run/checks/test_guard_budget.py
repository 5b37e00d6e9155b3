"""Issue 29: the regression guard's cost per feature is bounded, and footprints mean the same
with and without git (units; the end-to-end cases are in tests/test_guard_budget_e2e.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.config_layers import load_config
from orchestrator.regression_budget import parse_budget
from orchestrator.run.checks.guard.guard_plan import Candidate, plan_checks
from orchestrator.user_errors import UsageError


def _candidate(fid: str, shared: int = 1, *, failed: bool = False, dep: bool = False, last: int = 0,
               position: int = 0, command: str | None = None) -> Candidate:
    return Candidate(fid, command or f"check {fid}", shared, failed, dep, last, position)


def test_the_checks_most_likely_to_break_come_first() -> None:
    plan = plan_checks([
        _candidate("old", position=0, last=3), _candidate("fresh", position=1), _candidate("dep", dep=True, position=2),
        _candidate("flaky", failed=True, position=3), _candidate("two-files", shared=2, position=4),
    ], budget_seconds=None, estimate=lambda _f: 1.0, workers=1)
    assert plan.affected == ["two-files", "flaky", "dep", "fresh", "old"]
    assert plan.picked == plan.affected and plan.deferred == []


def test_the_budget_takes_what_fits_and_defers_the_rest() -> None:
    candidates = [_candidate(f"f{i}", position=i) for i in range(10)]
    plan = plan_checks(candidates, budget_seconds=3.0, estimate=lambda _f: 1.0, workers=2)
    assert plan.picked == ["f0", "f1", "f2", "f3", "f4", "f5"] and plan.deferred == ["f6", "f7", "f8", "f9"]
    # A budget too small for any check still runs the likeliest one.
    tiny = plan_checks(candidates, budget_seconds=0.0, estimate=lambda _f: 1.0, workers=1)
    assert tiny.picked == ["f0"] and len(tiny.deferred) == 9
    # A command already picked costs nothing more (features sharing one check share its run).
    shared = [_candidate("a", command="pytest"), _candidate("b", command="pytest", position=1)]
    assert plan_checks(shared, budget_seconds=0.0, estimate=lambda _f: 1.0, workers=1).picked == ["a", "b"]


def test_regression_budget_is_a_setting_like_the_others(tmp_path: Path) -> None:
    assert load_config({}, tmp_path, environ={}).regression_budget == "3x"
    assert load_config({}, tmp_path, environ={"ORCHESTRATE_REGRESSION_BUDGET": "20s"}).regression_budget == "20s"
    (tmp_path / "orchestrate.toml").write_text('regression_budget = "5X"\n')
    assert load_config({}, tmp_path, environ={}).regression_budget == "5x"
    assert parse_budget("5x").for_check(2.0) == 10.0 and parse_budget("20").for_check(2.0) == 20.0
    with pytest.raises(UsageError, match=r"regression-budget.*3x.*20s"):
        load_config({"regression_budget": "soon"}, tmp_path, environ={})


