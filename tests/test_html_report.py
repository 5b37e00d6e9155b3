"""The HTML report's parts: the data read from a project, the page, its size at 10,000 features."""

from __future__ import annotations

import json
import re

from orchestrator.commands.check_excerpt import error_excerpt
from orchestrator.commands.html_report import render_html
from orchestrator.commands.report_data import load_report_data
from orchestrator.commands.report_model import FeatureRow, ReportData, Span
from orchestrator.demo.fake_api.agent_turn import AgentTurn
from orchestrator.demo.textkit_plan import textkit_plan
from orchestrator.store.paths import ProjectPaths


def _big(n: int) -> ReportData:
    rows = [FeatureRow(id=f"f{i}", status="failed" if i % 97 == 0 else "passed", attempts=1, cost_usd=0.01,
                       tokens={"input": 10, "output": 5, "cacheRead": 100, "cacheWrite": 20}, context_tokens=i % 2100)
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
    from orchestrator.commands.output import describe
    from orchestrator.store.event_kinds import Verification

    event = Verification(type="verification", ts=0, id="a", command="pytest", success=False, exit_code=1, attempt=1,
                         output="..F\nE   AssertionError: assert 2 == 1\nFAILED t.py::x\n")
    lines = describe(event).splitlines()
    assert "FAILED (exit 1)" in lines[0]
    assert lines[1:] == ["      | E   AssertionError: assert 2 == 1", "      | FAILED t.py::x"]


# ---- `orchestrate run SPEC --html PATH`, end to end against the fake API ------------------------


def _self_contained(page: str) -> bool:
    """No resource fetched from anywhere: no script or stylesheet source, no URL but the SVG namespace."""
    without_namespace = page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    return not any(marker in without_namespace for marker in ("http://", "https://", "<script src", "<link ", "@import"))


def test_run_with_html_writes_the_report_of_the_run(fake_api, tmp_path):
    from tests.cli_helpers import run_cli, write_spec

    project, out = tmp_path / "project", tmp_path / "out" / "report.html"
    project.mkdir()
    (tmp_path / "out").mkdir()
    spec = write_spec(project, 3)

    result = run_cli(["run", str(spec), "--html", str(out)], project, fake_api)

    assert result.code == 0, result.stderr
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") or page.lstrip().lower().startswith("<!doctype html>")
    assert _self_contained(page) and "<svg" in page and "<style>" in page
    for index in (1, 2, 3):
        # The features by id and by the spec's name, each with its anchor and a link to its log.
        assert f'id="feature-feat-0{index}"' in page and f"Feature {index}" in page
        assert f'href="../project/.autonomous/logs/feat-0{index}.json"' in page


def test_run_with_html_writes_the_report_when_the_run_fails(fake_api, tmp_path):
    from tests.cli_helpers import run_cli, write_spec

    out = tmp_path / "report.html"
    spec = write_spec(tmp_path, 2, extra={"feat-02": {"verify": "echo 'E   AssertionError: no widget'; exit 1",
                                                       "max_attempts": 1}})

    result = run_cli(["run", str(spec), "--html", str(out)], tmp_path, fake_api)

    assert result.code == 1, result.stderr
    page = out.read_text()
    assert _self_contained(page)
    assert 'id="feature-feat-01"' in page and 'id="feature-feat-02"' in page
    assert "AssertionError: no widget" in page  # the failed check's error line, in the table


def test_in_a_browser_the_report_names_its_bars_and_scales_and_lists_footprint_files(fake_api, tmp_path):
    """Issue 27: a screenshot or CI artifact reads without hovering: the charts name their bars
    and scales, the footprint column shows files, the feature column does not wrap."""
    from tests.browser import open_in_chromium
    from tests.cli_helpers import run_cli
    from tests.git_helpers import init_repo

    project = init_repo(tmp_path / "project")
    ids = ["a-rather-long-feature-id-for-wrapping", "feat-02"]
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"project": "p", "features": [
        {"id": fid, "name": f"Feature {i}", "description": "d", "verify": f"test -f features/{fid}.txt"}
        for i, fid in enumerate(ids, 1)]}))
    out = tmp_path / "report.html"
    assert run_cli(["run", str(spec), "--html", str(out)], project, fake_api).code == 0

    footprint = "tr#feature-feat-02 td.files"
    names, ticks, feature = "svg.chart text.bar-name", "svg.chart text.tick", f"tr#feature-{ids[0]} td.feat a"
    page = open_in_chromium(out, tmp_path / "report.png", read=(footprint, names, ticks, feature))

    assert page.console_errors == []
    assert page.texts[footprint] == ["features/feat-02.txt"]
    assert page.texts[names].count("feat-02") == 3  # under its bar in tokens, cost and context
    assert any(text.startswith("a-rather-long") and text.endswith("…") for text in page.texts[names])
    assert "0 tokens" in page.texts[ticks] and any(re.fullmatch(r"[\d,]+ tokens", t) and t != "0 tokens"
                                                    for t in page.texts[ticks]), page.texts[ticks]
    assert any(re.fullmatch(r"\$\d\.\d{4}", t) and t != "$0.0000" for t in page.texts[ticks]), page.texts[ticks]
    (width, height), = page.boxes[feature]
    assert height < 24 and width > 200, page.boxes[feature]  # on one line, not wrapped
