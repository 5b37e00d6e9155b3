"""Every error written to the agent reaches a person in words addressed to them (issue 43 item 7):
the console, `orchestrate logs ID`, the HTML report, JUnit and the step summary each show the
sentence `agent_words.for_the_user` makes of it, never "your change" or "fix your change"."""

from __future__ import annotations

import json
import re

import pytest

from orchestrator.commands.log_view import log_text
from orchestrator.commands.rendering.output import describe
from orchestrator.commands.report.html_report import render_html
from orchestrator.commands.report.report_data import load_report_data
from orchestrator.commands.report.reports import ReportedFeature, ReportTotals, RunReport, junit_xml, step_summary
from orchestrator.llm.costs.pricing import TokenUsage
from orchestrator.merge.queue import _conflict
from orchestrator.run.checks.guard.regression import broken_result
from orchestrator.run.checks.influence.check_influence import strict_refusal
from orchestrator.run.checks.protection.hidden_files import hidden_result
from orchestrator.run.checks.running.check_pool import CheckRun
from orchestrator.store.agent_words import FIX_THE_CODE, REDO_ON_TOP, RESTORE_THEM, TAKE_RULES_OUT
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.event_kinds import Verification
from orchestrator.store.feature_log import FeatureLog
from orchestrator.store.records import AttemptRecord
from orchestrator.store.run_state import FeatureState
from shared_base.check_result import CheckResult, Influencer

# What the agent is told and a person must not read as addressed to them.
_TO_THE_AGENT = re.compile(r"\byour?\b|" + "|".join(re.escape(words) for words in (
    FIX_THE_CODE, RESTORE_THEM, TAKE_RULES_OUT, REDO_ON_TOP)), re.IGNORECASE)


def _broken() -> CheckResult:
    run = CheckRun("package-skeleton", CheckResult(command="pytest tests/test_pkg.py", success=False, exit_code=1,
                                                   output="E   assert [] == ['x']\n", attempt=1), 900)
    return broken_result([run], 2, shared=["pyproject.toml"], deferred=1)


ERRORS = {
    "regression guard": (_broken, "the attempt broke feature package-skeleton"),
    "protected files": (lambda: CheckResult(
        command="pytest", success=False, attempt=1, refused_by="the protected-files guard",
        error=f"protected files changed by the agent (restored{FIX_THE_CODE}: tests/test_a.py"),
        "the agent was told to fix the code, not the check"),
    "--strict-checks": (lambda: strict_refusal("pytest", 1, [Influencer(path="conftest.py", kind="conftest",
                                                                         change="added")]),
                        "the agent was told to restore or remove them"),
    "ignore rules": (lambda: hidden_result("pytest", 1, [("textkit/core.py", "`*.py` in .gitignore")]),
                     "the agent was told to take those rules out of .gitignore"),
    "merge conflict": (lambda: _conflict("abc", ["a.py"], "", "pytest", 1).failure,
                       "starts from the current branch and redoes the change"),
}


@pytest.fixture(params=sorted(ERRORS))
def told(request: pytest.FixtureRequest) -> tuple[CheckResult, str]:
    make, said = ERRORS[request.param]
    result = make()
    assert result is not None and result.error and _TO_THE_AGENT.search(result.error), "the agent's words"
    return result, said


def _shown(text: str, said: str, *, cut: bool = False) -> None:
    """`cut`: the surface shows a line's first 160 characters (`error_excerpt`), where the user's
    sentence may not be: what the agent was told is not there either way."""
    assert cut or said in text, text
    assert not _TO_THE_AGENT.search(text), text


def test_the_console_says_it_to_the_user(told: tuple[CheckResult, str]) -> None:
    result, said = told
    line = describe(Verification.of("feat", result))
    assert line is not None
    _shown(line.split("\n")[0], said)


def test_logs_id_says_it_to_the_user(told: tuple[CheckResult, str]) -> None:
    result, said = told
    attempt = AttemptRecord(attempt=1, verification=result, error=result.error)
    text = log_text(FeatureLog(id="feat", status="failed", attempts=1, attempt_history=[attempt]))
    _shown("\n".join(line for line in text.splitlines() if "| " not in line), said)


def _report(result: CheckResult) -> RunReport:
    entry = FeatureState(status="failed", attempts=1, duration_ms=1, reason="check still failing after 1 attempt(s)",
                         last_verification=result.model_copy(update={"output": ""}))
    feature = ReportedFeature(id="feat", name="Feat", category="core", state=entry)
    totals = ReportTotals(features=1, passed=0, failed=1, blocked=0, pending=0, in_progress=0, tokens=TokenUsage(),
                          cost_usd=0.0, api_calls=1, summarizer_tokens=TokenUsage(), summarizer_cost_usd=0.0)
    return RunReport(run_id="r", spec="spec.json", spec_hash="h", outcome="failed", exit_code=1, message=None,
                     model="m", context="compressed", duration_ms=1, totals=totals, features=[feature])


def test_junit_and_the_step_summary_say_it_to_the_user(told: tuple[CheckResult, str]) -> None:
    result, said = told
    _shown(junit_xml(_report(result)), said)
    _shown(step_summary(_report(result)), said, cut=True)


def test_the_html_report_says_it_to_the_user(told: tuple[CheckResult, str], tmp_path) -> None:
    result, said = told
    paths = ProjectPaths.for_project(tmp_path)
    paths.state_file.parent.mkdir(parents=True)
    paths.state_file.write_text(json.dumps({"features": {"feat": {
        "status": "failed", "attempts": 1, "lastVerification": result.model_copy(update={"output": ""}).dump()}}}))
    page = render_html(load_report_data(paths))
    _shown(page.split("<style>")[0] + page.split("</style>")[-1], said, cut=True)
