"""The HTML report's parts: the data read from a project, the page, its size at 10,000 features."""

from __future__ import annotations

import json

from fake_messages_api.scripted_agent.agent_turn import AgentTurn
from orchestrator.commands.report.html_report import render_html
from orchestrator.commands.report.report_data import load_report_data
from orchestrator.commands.report.report_model import FeatureRow, ReportData, Span
from orchestrator.demo.textkit_plan import textkit_plan
from orchestrator.llm.costs.pricing import TokenUsage
from orchestrator.store.check_excerpt import error_excerpt
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.run_state import FeatureState


def _big(n: int) -> ReportData:
    tokens = TokenUsage(input=10, output=5, cache_read=100, cache_write=20)
    rows = [FeatureRow(id=f"f{i}", state=FeatureState(status="failed" if i % 97 == 0 else "passed", attempts=1,
                                                      cost_usd=0.01, tokens=tokens), context_tokens=i % 2100)
            for i in range(n)]
    spans = [Span(f"f{i}", 1, i * 10, i * 10 + 9, "passed", lane=i % 4) for i in range(n)]
    return ReportData(project="p", features=rows, spans=spans, lanes=4, duration_ms=n * 10,
                      prompt_sizes=[(i * 10, 1000 + i) for i in range(n)], totals={"costUsd": 100.0})


def test_ten_thousand_features_aggregate_into_a_small_page():
    page = render_html(_big(10_000))
    assert page.count("<rect") < 3000  # buckets, not 10,000 bars per chart
    assert len(page) < 1_500_000
    assert "more passed features are not listed" in page and "status --all" in page
    assert 'id="feature-f97"' in page  # failed features are always listed


def test_overlapping_attempts_get_their_own_lanes(tmp_path):
    paths = ProjectPaths.for_project(tmp_path)
    paths.events_log.parent.mkdir(parents=True)
    events = [
        {"type": "feature_started", "ts": 1000, "id": "a", "attempt": 1},
        {"type": "feature_started", "ts": 1100, "id": "b", "attempt": 1},
        {"type": "verification", "ts": 1500, "id": "a", "success": False},
        {"type": "feature_finished", "ts": 1600, "id": "b", "status": "passed"},
        {"type": "regression_check", "ts": 1650, "id": "b", "success": True},
    ]
    paths.events_log.write_text("\n".join(json.dumps(e) for e in events) + "\n{torn")
    data = load_report_data(paths)
    assert data.lanes == 2
    assert [(s.feature, s.outcome, s.lane) for s in data.spans] == [("a", "failed", 0), ("b", "passed", 1)]
    assert "regression check" in render_html(data)


def test_the_excerpt_picks_the_error_lines():
    output = "..F.\n=== FAILURES ===\n___ test_x ___\n    assert f() == 1\nE   AssertionError: assert 2 == 1\n" \
             "FAILED checks/test_x.py::test_x\n1 failed in 0.1s\n"
    assert error_excerpt(output)[:2] == ["E   AssertionError: assert 2 == 1", "FAILED checks/test_x.py::test_x"]
    assert error_excerpt("", "timed out after 600s") == ["timed out after 600s"]


def _turn(fid: str, step: int, request_text: str = "## Feature\nID: x") -> AgentTurn:
    return AgentTurn(fid, step, request_text)


def test_the_demo_truncate_breaks_package_skeleton_until_told():
    first = json.dumps(textkit_plan(_turn("truncate", 0)))
    assert "wcwidth" in first
    told = "## Last Verification Result\n{\"error\": \"your change broke feature package-skeleton: ...\"}"
    retry = json.dumps(textkit_plan(_turn("truncate", 0, told)))
    assert "wcwidth" not in retry and "dependencies = []" in retry


def test_the_demo_slugify_fails_first_then_fixes():
    assert "NFKD" not in json.dumps(textkit_plan(_turn("slugify", 0)))
    retry = "## Last Verification Result\n{\"success\": false}"
    assert "NFKD" in json.dumps(textkit_plan(_turn("slugify", 0, retry)))


def test_status_lists_only_features_not_passed_past_50(tmp_path, capsys):
    from orchestrator.commands.listing import print_status
    from orchestrator.store.run_state import FeatureState, RunState
    from orchestrator.store.state import StateStore

    paths = ProjectPaths.for_project(tmp_path)
    state = RunState(features={f"f{i:03d}": FeatureState(status="failed" if i == 7 else "passed") for i in range(60)})
    StateStore(paths).save(state)
    print_status(paths, False)
    out = capsys.readouterr().out
    assert "f007" in out and "f008" not in out and "59 passed features not listed (--all lists them)" in out
    print_status(paths, False, show_all=True)
    assert "f008" in capsys.readouterr().out


def test_a_failed_check_shows_its_error_lines_under_failed():
    from orchestrator.commands.rendering.output import describe
    from orchestrator.store.event_kinds import Verification

    event = Verification(type="verification", ts=0, id="a", command="pytest", success=False, exit_code=1, attempt=1,
                         output="..F\nE   AssertionError: assert 2 == 1\nFAILED t.py::x\n")
    lines = describe(event).splitlines()
    assert "FAILED (exit 1)" in lines[0]
    assert lines[1:] == ["      | E   AssertionError: assert 2 == 1", "      | FAILED t.py::x"]


# ---- `orchestrate run SPEC --html PATH`, end to end against the fake API ------------------------




def test_an_attempt_its_run_cut_short_is_interrupted_and_the_duration_is_the_clis(tmp_path):
    """As `orchestrate logs` says it ("interrupted (run again)"), and the time the run's closing line gave."""
    paths = ProjectPaths.for_project(tmp_path)
    paths.events_log.parent.mkdir(parents=True)
    events = [
        {"type": "run_started", "ts": 1000, "runId": "r1"},
        {"type": "feature_started", "ts": 1100, "id": "case", "attempt": 1},
        {"type": "run_finished", "ts": 3000, "outcome": "interrupted", "durationMs": 2000},
        {"type": "run_started", "ts": 5000, "runId": "r2"},
        {"type": "feature_started", "ts": 5100, "id": "case", "attempt": 1},
        {"type": "verification", "ts": 6000, "id": "case", "success": True},
        {"type": "feature_finished", "ts": 6100, "id": "case", "status": "passed"},
        {"type": "run_finished", "ts": 13700, "outcome": "passed", "durationMs": 8700},
    ]
    paths.events_log.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    data = load_report_data(paths)
    assert [s.outcome for s in data.spans] == ["interrupted", "passed"]
    page = render_html(data)
    assert "case attempt 1: interrupted (run again)" in page and "attempt 1: failed" not in page
    assert "<b>8.7s</b>duration, last run" in page and "<b>10.7s</b>duration, all 2 runs" in page


def test_the_cost_card_has_the_worst_case_bookings_beside_it():
    data = ReportData(project="p", totals={"costUsd": 0.4113, "unconfirmedCostUsd": 0.1471, "unconfirmedCalls": 2})
    page = render_html(data)
    assert "<b>$0.4113</b>cost" in page
    assert "<b>$0.1471</b>of it booked at worst case for 2 calls cut off before their answer" in page
    assert "booked at worst case" not in render_html(ReportData(project="p", totals={"costUsd": 0.2}))


def test_status_shows_the_worst_case_bookings_as_their_own_figure(tmp_path, capsys):
    from orchestrator.commands.listing import print_status
    from orchestrator.llm.costs.spend import RunTotals
    from orchestrator.store.run_state import FeatureState, RunState
    from orchestrator.store.state import StateStore

    paths = ProjectPaths.for_project(tmp_path)
    state = RunState(features={"a": FeatureState(status="passed")})
    state.totals = RunTotals(cost_usd=0.4113, unconfirmed_cost_usd=0.1471, unconfirmed_calls=1)
    StateStore(paths).save(state)
    print_status(paths, False)
    assert "$0.4113 ($0.2642 answered + $0.1471 booked at worst case for 1 call cut off before its answer)" in (
        capsys.readouterr().out)


def test_the_step_summary_and_json_report_count_the_calls_booked_at_worst_case():
    from orchestrator.commands.report.reports import ReportTotals, RunReport, step_summary
    from orchestrator.llm.costs.pricing import TokenUsage

    totals = ReportTotals(features=0, passed=0, failed=0, blocked=0, pending=0, in_progress=0, tokens=TokenUsage(),
                          cost_usd=0.4113, api_calls=9, summarizer_tokens=TokenUsage(), summarizer_cost_usd=0.0,
                          unconfirmed_cost_usd=0.1471, unconfirmed_calls=3)
    report = RunReport(run_id="r", spec="spec.json", spec_hash="h", outcome="interrupted", exit_code=130, message=None,
                       model="m", context="compressed", duration_ms=8700, totals=totals, features=[])
    assert report.dump()["totals"]["unconfirmedCalls"] == 3
    assert ("Total: 0 tokens, $0.4113 ($0.2642 answered + $0.1471 booked at worst case for 3 calls cut off before "
            "their answer), 8.7s.") in step_summary(report)
