"""`orchestrate demo` as a new user runs it: no key, no network, the textkit spec built for real.

The demo runs the shipped copy of `specs/textkit` (kept equal to it by
`test_the_shipped_spec_is_specs_textkit`), so this is also the example spec's end-to-end test
against the shipped scripted model. One demo run (module fixture) serves every test here.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
from pathlib import Path

import pytest

from orchestrator.demo.scripted import DEMO_PRICES
from orchestrator.demo.spec_bundle import bundled_files, directory_files
from orchestrator.llm.costs.pricing import TokenUsage
from tests.cli_helpers import REPO_ROOT, cli_env, orchestrate_command, run_cli

pytestmark = pytest.mark.slow

STATE = Path(".autonomous/state/execution-state.json")


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("demo")
    (root / "cwd").mkdir()
    (root / "tmp").mkdir()
    # No key, and a base URL nobody answers: the demo must bring its own model. No --dir: it
    # builds in a new temporary directory (under TMPDIR) and says where.
    result = run_cli(["demo"], cwd=root / "cwd", key=None, timeout=240,
                     ANTHROPIC_BASE_URL="http://127.0.0.1:9", TMPDIR=str(root / "tmp"))
    return root, result


@pytest.fixture(scope="module")
def demo(demo_run):
    _root, result = demo_run
    where = re.search(r"building textkit in (\S+)/textkit ", result.stdout)
    assert where, result.stdout + result.stderr
    return Path(where.group(1)), result


def test_the_demo_builds_in_a_new_temporary_directory_and_says_where(demo_run, demo):
    root, _ = demo_run
    directory, _ = demo
    assert directory.parent == root / "tmp" and directory.name.startswith("orchestrate-demo-")
    assert list((root / "cwd").iterdir()) == [], "nothing is written in the current directory"


def test_the_demo_presses_ctrl_c_once_and_resumes(demo):
    directory, result = demo
    before, _, after = result.stdout.partition("that Ctrl-C was the demo's own")
    assert after, result.stdout
    assert "run interrupted: 3 passed" in before and "[4/8] case-conversion" in before
    assert f"orchestrate demo --dir {directory}` resumes" in after
    assert "3 already passed" in after and "[1/8]" not in after and "run passed: 8 passed" in after
    events = [json.loads(line) for line in (directory / "textkit/.autonomous/events.jsonl").read_text().splitlines()]
    assert [e["outcome"] for e in events if e["type"] == "run_finished"] == ["interrupted", "passed"]
    # The files the interrupted attempt left are what it resumes on: no warning about them. And
    # the Ctrl-C was its own: no "run again to resume" to act on (a note in the events, shown with -v).
    assert "uncommitted changes" not in result.stderr, result.stderr
    assert "warning" not in result.stderr and "run again" not in result.stdout + result.stderr, result.stderr
    assert [e["type"] for e in events if e["type"] in ("warning", "note") and "state saved" in e["message"]] == ["note"]


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


def test_demo_refuses_a_non_empty_directory_that_holds_no_demo(tmp_path):
    (tmp_path / "orchestrate-demo").mkdir()
    (tmp_path / "orchestrate-demo" / "mine.txt").write_text("keep me")
    result = run_cli(["demo", "--dir", "orchestrate-demo"], cwd=tmp_path, key=None)
    assert result.code == 2
    assert "not empty" in result.stderr and "--dir" in result.stderr
    assert (tmp_path / "orchestrate-demo" / "mine.txt").read_text() == "keep me"
    assert sorted(p.name for p in (tmp_path / "orchestrate-demo").iterdir()) == ["mine.txt"]


def test_a_demo_stopped_by_ctrl_c_resumes_with_demo_dir(tmp_path):
    directory = tmp_path / "my-demo"
    proc = subprocess.Popen(orchestrate_command("demo", "--dir", str(directory)), cwd=tmp_path, text=True,
                            env=cli_env(key=None), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL)
    assert proc.stdout is not None
    seen = []
    for line in proc.stdout:  # Ctrl-C once slugify has started, before the demo's own Ctrl-C
        seen.append(line)
        if line.startswith("[2/8] slugify"):
            proc.send_signal(signal.SIGINT)
            break
    out, err = proc.communicate(timeout=120)
    stopped = "".join(seen) + out
    assert proc.returncode == 130, stopped + err
    assert "that Ctrl-C was the demo's own" not in stopped
    # The closing screen offers the resume, and no command that does not apply yet.
    assert f"orchestrate demo --dir {directory}" in stopped
    assert "orchestrate logs slugify" not in stopped, "slugify has no failed attempt and retry to show yet"

    resumed = run_cli(["demo", "--dir", str(directory)], cwd=tmp_path, key=None, timeout=240)

    assert resumed.code == 0, resumed.stdout + resumed.stderr
    assert f"resuming the demo in {directory}" in resumed.stdout
    assert "1 already passed" in resumed.stdout and "run passed: 8 passed" in resumed.stdout
    assert "that Ctrl-C was the demo's own" not in resumed.stdout, "a resumed demo does not interrupt itself again"


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


def test_the_demo_is_priced_as_the_models_it_stands_for(demo):
    # Its ids are no price table's: unpriced, they would be booked at the dearest known price.
    directory, _ = demo
    status = run_cli(["status", "--project-dir", str(directory / "textkit")], cwd=directory, key=None)
    totals = re.search(r"([\d,]+) tokens, \$(\d+\.\d+)", status.stdout)
    assert totals, status.stdout + status.stderr
    tokens, cost = int(totals.group(1).replace(",", "")), float(totals.group(2))
    assert 0 < cost <= tokens * 15 / 1_000_000, "at most every token at Sonnet's output price"
    # Each model's answered calls cost exactly what its model's list price makes of their tokens.
    by_model = json.loads((directory / "textkit" / STATE).read_text())["totals"]["byModel"]
    assert set(by_model) == set(DEMO_PRICES), by_model
    for model, share in by_model.items():
        usage = TokenUsage.model_validate(share["tokens"])
        assert share["costUsd"] == pytest.approx(DEMO_PRICES[model].cost(usage), abs=1e-5), (model, share)
