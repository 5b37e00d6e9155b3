"""The regression guard's choice of checks, the assessment's file names, and running checks at once."""

from __future__ import annotations

from pathlib import Path

from orchestrator.run.checks.guard.regression import broken_result
from orchestrator.run.checks.running.check_pool import check_runner, run_checks
from tests.environments import unsandboxed


def test_checks_run_at_once_keep_their_order_and_a_failure_names_the_broken_feature(tmp_path: Path) -> None:
    runs = run_checks([("a", "true"), ("b", "echo bad; exit 3"), ("c", "true")], tmp_path, check_runner(unsandboxed(tmp_path), 5.0), 3)
    assert [(run.feature_id, run.success) for run in runs] == [("a", True), ("b", False), ("c", True)]
    result = broken_result([runs[1]], attempt=2)
    assert result.error is not None and result.error.startswith("your feature's own check passed, but your change broke feature b")
    assert result.command == "echo bad; exit 3" and "bad" in result.output and not result.success


def test_a_hanging_check_times_out(tmp_path: Path) -> None:
    (run,) = run_checks([("a", "sleep 30")], tmp_path, check_runner(unsandboxed(tmp_path), 0.5), 2)
    assert not run.success and run.result.error == "timed out after 0.5 s"




def test_a_failure_says_how_many_announced_checks_were_deferred(tmp_path: Path) -> None:
    """The prompt announced every affected feature's check; one the guard's budget left to final
    verification is said to be deferred, not silently skipped (issue 42 item 9)."""
    (broken,) = run_checks([("b", "exit 1")], tmp_path, check_runner(unsandboxed(tmp_path), 5.0), 1)
    told = broken_result([broken], attempt=1, deferred=2).error or ""
    assert "; 2 other announced check(s) were deferred to final verification" in told
    assert "deferred" not in (broken_result([broken], attempt=1).error or "")
