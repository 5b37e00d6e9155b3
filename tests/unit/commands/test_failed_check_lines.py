"""A failed check's first meaningful lines under its line, wherever it ran (issue 41): the guard's
re-runs (`-v`), final verification of a run or of `combine` (the event keeps each failure's
output), `logs ID` for a check run again later and for the guard's failed re-runs; and one name
for a result that no exit status decided."""

from __future__ import annotations

import json

from orchestrator.commands.log_view import log_text
from orchestrator.commands.rendering.output import describe
from orchestrator.store.check_excerpt import check_verdict, failure_reason
from orchestrator.store.event_kinds import FinalVerification, RegressionCheck, parse_event
from orchestrator.store.feature_log import FeatureLog
from orchestrator.store.records import AttemptRecord, CheckFailure, ReCheck
from shared_base.check_result import CheckResult

OUTPUT = "....F\n=== FAILURES ===\n    def test_add():\n>       assert add(1, 2) == 3\nE       assert 0 == 3\n1 failed\n"
FAILED = CheckResult(command="pytest -q", success=False, exit_code=1, output=OUTPUT, attempt=0)


def test_final_verification_shows_each_failed_checks_first_lines_and_keeps_them_in_the_event() -> None:
    event = FinalVerification(type="final_verification", ts=0, checked=2, passed=1, failed=["feat-02"],
                              duration_ms=5, failures=[CheckFailure.of("feat-02", FAILED)])

    line = describe(parse_event(json.loads(event.model_dump_json(by_alias=True))))

    assert line is not None
    assert line.splitlines() == [
        "final verification: 1/2 check(s) pass on the final tree; regressed: feat-02",
        "    feat-02: check FAILED (exit code 1)",
        "      | E       assert 0 == 3",
    ]


def test_a_regression_guards_failed_rerun_shows_its_first_lines_when_verbose() -> None:
    event = RegressionCheck(type="regression_check", ts=0, id="feat-03", checked="feat-01", command="pytest -q",
                            success=False, exit_code=1, output=OUTPUT)

    assert describe(event) is None
    assert describe(event, verbose=True) == (
        "      regression check of feat-01: FAILED (exit 1)\n        | E       assert 0 == 3")


def test_logs_shows_a_check_run_again_later_and_the_guards_failed_reruns() -> None:
    attempt = AttemptRecord(
        attempt=1, stop="end_turn", verification=CheckResult(command="pytest -q", success=True, exit_code=0, attempt=1),
        regression_checks=[ReCheck.of("feat-01", FAILED, 10), ReCheck.of("feat-02", FAILED.model_copy(
            update={"success": True, "exit_code": 0}), 10)],
    )
    log = FeatureLog(id="feat-03", name="n", status="regressed", reason="its check failed again on a later tree",
                     attempt_history=[attempt], verification=FAILED)

    text = log_text(FeatureLog.model_validate_json(log.model_dump_json(by_alias=True)))

    assert "      feat-01: `pytest -q` FAILED (exit 1)\n        | E       assert 0 == 3\n" in text  # the guard's failed re-run kept its output
    assert "last check, run again later:\n    check `pytest -q` FAILED (exit 1)\n" in text
    assert ReCheck.of("feat-02", CheckResult(success=True, exit_code=0, output="noise"), 1).dump().get("output") is None


def test_a_result_no_exit_status_decided_says_what_refused_it() -> None:
    refused = CheckResult(success=False, exit_code=None, refused_by="the protected-files guard")
    assert check_verdict(refused) == "REFUSED by the protected-files guard"
    assert check_verdict(CheckResult(success=False, exit_code=None, error="timed out")) == "FAILED (no exit status)"
    assert check_verdict(FAILED) == "FAILED (exit 1)" and check_verdict(CheckResult(success=True), "ok") == "ok"
    assert failure_reason(OUTPUT, None, 1) == "exit code 1: E       assert 0 == 3"
    assert failure_reason(OUTPUT, "timed out after 5 s", None) == "timed out after 5 s"
