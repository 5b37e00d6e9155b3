"""`orchestrate demo` as a new user runs it: no key, no network, the textkit spec built for real.

The demo runs the shipped copy of `specs/textkit` (kept equal to it by
`test_the_shipped_spec_is_specs_textkit`), so this is also the example spec's end-to-end test
against the shipped scripted model. One demo run (module fixture) serves every test here.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from orchestrator.demo.spec_bundle import bundled_files, directory_files
from tests.cli_helpers import REPO_ROOT, run_cli

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    root = tmp_path_factory.mktemp("demo")
    # No key, and a base URL nobody answers: the demo must bring its own model.
    result = run_cli(["demo", "--dir", "orchestrate-demo"], cwd=root, key=None, timeout=180,
                     ANTHROPIC_BASE_URL="http://127.0.0.1:9")
    return root / "orchestrate-demo", result


def test_the_shipped_spec_is_specs_textkit():
    assert bundled_files() == directory_files(REPO_ROOT / "specs" / "textkit"), (
        "rebuild it: python -m orchestrator.demo.spec_bundle specs/textkit")


def test_demo_builds_textkit_offline_and_exits_0(demo):
    _directory, result = demo
    assert result.code == 0, result.stdout + result.stderr
    assert "run passed: 8 passed, 0 failed, 0 blocked" in result.stdout
    assert "summary is empty" not in result.stderr
    # Every line that names the model says it is the demo's.
    model_lines = [line for line in result.stdout.splitlines() if "model" in line and "scripted" not in line]
    assert all("demo" in line for line in model_lines if "model " in line), model_lines
    assert "demo-scripted-sonnet" in result.stdout
    for command in ("orchestrate status", "orchestrate logs", "orchestrate context", "report.html"):
        assert command in result.stdout


def test_the_demo_ends_with_the_reference_that_test_example_specs_checks(demo):
    from orchestrator.demo.textkit_sources import final_tree

    directory, _ = demo
    for relative, content in final_tree().items():
        assert (directory / "textkit" / relative).read_text() == content, relative


def test_demo_shows_a_failure_fed_back_and_fixed(demo):
    directory, _ = demo
    state = json.loads((directory / "textkit/.autonomous/state/execution-state.json").read_text())
    assert state["features"]["slugify"]["attempts"] == 2
    assert {f["status"] for f in state["features"].values()} == {"passed"}
    log = json.loads((directory / "textkit/.autonomous/logs/slugify.json").read_text())
    assert log["attemptHistory"][0]["verification"]["success"] is False


def test_demo_shows_the_regression_guard_catch_a_break_and_the_fix(demo):
    directory, _ = demo
    log = json.loads((directory / "textkit/.autonomous/logs/truncate.json").read_text())
    first, second = log["attemptHistory"][0], log["attemptHistory"][1]
    assert "your change broke feature package-skeleton" in first["verification"]["error"]
    assert [run["success"] for run in first["regressionChecks"] if run["id"] == "package-skeleton"] == [False]
    assert second["verification"]["success"] is True
    state = json.loads((directory / "textkit/.autonomous/state/execution-state.json").read_text())
    assert state["features"]["truncate"]["status"] == "passed"


def test_demo_summarizes_at_5_and_checkpoints_every_feature(demo):
    directory, _ = demo
    events = [json.loads(line) for line in (directory / "textkit/.autonomous/events.jsonl").read_text().splitlines()]
    summaries = [e for e in events if e["type"] == "summarization"]
    assert summaries[0]["trigger"] == "every-5" and all(e["success"] for e in summaries)
    summary = json.loads((directory / "textkit/.autonomous/context/running-summary.json").read_text())
    assert "textkit" in json.dumps(summary)
    log = subprocess.run(["git", "-C", str(directory / "textkit"), "log", "--oneline"], capture_output=True, text=True)
    assert log.stdout.count("orchestrate: ") == 8


def test_the_demo_leaves_a_working_textkit(demo):
    directory, _ = demo
    result = subprocess.run(["python3", "-m", "textkit", "case", "snake", "HTTPServer"], cwd=directory / "textkit",
                            capture_output=True, text=True, timeout=60)
    assert result.stdout == "http_server\n"
    pyproject = (directory / "textkit/pyproject.toml").read_text()
    assert "dependencies = []" in pyproject  # the truncate feature's break is undone


def test_demo_refuses_a_non_empty_directory(tmp_path):
    (tmp_path / "orchestrate-demo").mkdir()
    (tmp_path / "orchestrate-demo" / "mine.txt").write_text("keep me")
    result = run_cli(["demo"], cwd=tmp_path, key=None)
    assert result.code == 2
    assert "not empty" in result.stderr and "--dir" in result.stderr
    assert (tmp_path / "orchestrate-demo" / "mine.txt").read_text() == "keep me"


def test_report_html_of_the_demo(demo, tmp_path):
    directory, _ = demo
    html = directory / "report.html"
    assert html.is_file()
    page = html.read_text()
    assert "<svg" in page and "slugify" in page and "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    again = tmp_path / "again.html"
    result = run_cli(["report", "--html", str(again), "--project-dir", str(directory / "textkit")], cwd=tmp_path)
    assert result.code == 0, result.stderr
    assert "feature-slugify" in again.read_text()


def test_the_report_opens_in_a_real_browser(demo, tmp_path):
    from tests.browser import open_in_chromium

    directory, _ = demo
    shot = tmp_path / "report.png"
    page = open_in_chromium(directory / "report.html", shot)
    assert page.console_errors == []
    assert page.charts and all(w > 0 and h > 0 for w, h in page.charts), page.charts
    assert shot.stat().st_size > 10_000
    print(f"screenshot of the demo's HTML report: {shot}")
