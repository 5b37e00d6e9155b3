"""Issue 27: the live view names what each feature (or the run) is doing, with the phase's own clock."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from rich.console import Console

from orchestrator.commands.live_view import LiveRenderer
from orchestrator.commands.output import PlainRenderer
from orchestrator.llm.pricing import TokenUsage
from orchestrator.store.event_kinds import ApiCall, FeatureFinished, FeatureStarted
from orchestrator.store.events import EventSink
from tests.cli_helpers import cli_env, orchestrate_command, start_tmux_pane, write_spec
from tests.git_helpers import init_repo


def _screen(renderer: LiveRenderer) -> str:
    out = Console(file=io.StringIO(), width=160, color_system=None)
    out.print(renderer.live.renderable)
    text = out.file.getvalue()  # type: ignore[attr-defined]
    assert isinstance(text, str)
    return text


def _sink() -> tuple[EventSink, LiveRenderer]:
    renderer = LiveRenderer(console=Console(file=io.StringIO(), width=160, force_terminal=True))
    return EventSink(renderer), renderer


def _start(sink: EventSink, feature_id: str, index: int) -> None:
    sink.emit(FeatureStarted(id=feature_id, name=feature_id, attempt=1, max_attempts=3, index=index, total=800))


def _api_call(sink: EventSink, feature_id: str, turn: int) -> None:
    usage = TokenUsage(input=10, output=5)
    sink.emit(ApiCall(id=feature_id, feature=feature_id, turn=turn, usage=usage, cost_usd=0.01, run_tokens=15,
                      run_cost_usd=0.01))


def test_a_serial_feature_goes_agent_turn_check_regression_then_the_run_to_final_verification() -> None:
    sink, renderer = _sink()
    try:
        _start(sink, "slugify", 3)
        assert "agent turn 1" in _screen(renderer)
        _api_call(sink, "slugify", 3)
        assert "agent turn 3" in _screen(renderer)
        sink.phase("check", "slugify")
        shown = _screen(renderer)
        assert "check" in shown and "agent turn" not in shown
        sink.phase("regression", "slugify", 5, 14)
        assert "regression 5/14" in _screen(renderer)
        sink.emit(FeatureFinished(id="slugify", status="passed", attempts=1, duration_ms=1, tokens=15,
                                  usage=TokenUsage(input=10, output=5), cost_usd=0.01))
        sink.phase("final verification", None, 120, 800)
        shown = _screen(renderer)
        assert "final verification 120/800" in shown and "slugify" not in shown
    finally:
        renderer.close()


def test_each_worker_shows_its_own_phase_and_a_phase_clock_that_restarts_when_the_phase_changes() -> None:
    sink, renderer = _sink()
    try:
        _start(sink, "alpha", 1)
        _start(sink, "beta", 2)
        _api_call(sink, "alpha", 2)
        renderer.busy["alpha"].phase_started -= 75  # alpha's agent has been at it 1m15s
        sink.phase("merging", "beta")
        rows = {line.split()[1]: line for line in _screen(renderer).splitlines() if line.split()[1:2] in (["alpha"], ["beta"])}
        assert "agent turn 2" in rows["alpha"] and "1m15s" in rows["alpha"]
        assert "merging" in rows["beta"] and "0m00s" in rows["beta"]
        renderer.busy["beta"].phase_started = time.monotonic() - 5
        sink.phase("regression", "beta", 1, 3)  # a new phase: its clock starts
        beta = next(line for line in _screen(renderer).splitlines() if " beta " in line)
        assert "regression 1/3" in beta and "0m00s" in beta
        renderer.busy["beta"].phase_started -= 7
        sink.phase("regression", "beta", 2, 3)  # a step of the same phase keeps its clock
        beta = next(line for line in _screen(renderer).splitlines() if " beta " in line)
        assert "regression 2/3" in beta and "0m07s" in beta
    finally:
        renderer.close()


def test_phases_reach_no_plain_output_and_no_event_log(tmp_path) -> None:
    out, log = io.StringIO(), tmp_path / "events.jsonl"
    sink = EventSink(PlainRenderer(out=out, err=io.StringIO()), log)
    sink.phase("regression", "alpha", 1, 3)
    assert out.getvalue() == "" and not log.exists()


def test_checks_report_their_progress_as_they_end_a_shared_command_counting_for_each(tmp_path) -> None:
    from orchestrator.run.checks.check_pool import run_checks
    from orchestrator.store.records import CheckResult

    seen: list[tuple[int, int]] = []

    def runner(command: str, workspace: object) -> CheckResult:
        return CheckResult(command=command, success=True, exit_code=0, attempt=0)

    checks = [("a", "pytest"), ("b", "true"), ("c", "pytest")]
    run_checks(checks, tmp_path, runner, 2, put_back=False, on_progress=lambda done, total: seen.append((done, total)))

    assert seen[0] == (0, 3) and seen[-1] == (3, 3) and len(seen) == 3
    assert sorted(seen) == seen


# ---- in a real terminal (tmux), through the CLI ------------------------------------------------


def _snapshots_in_tmux(tmp_path: Path, command: list[str], env: dict[str, str], cwd: Path) -> tuple[int, list[str]]:
    """Run `command` in a detached tmux pane (160 columns); its exit code and the screens seen
    every 0.2 s while it ran."""
    tmux, done = start_tmux_pane(tmp_path, command, env, cwd)
    screens: list[str] = []
    try:
        deadline = time.monotonic() + 120
        while not done.exists() and time.monotonic() < deadline:
            screens.append(subprocess.run([*tmux, "capture-pane", "-p"], capture_output=True, text=True).stdout)
            time.sleep(0.2)
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)
    assert done.exists(), "the command did not finish in the pane:\n" + (screens[-1] if screens else "")
    return int(done.read_text()), screens


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed: no real terminal to run the live view in")
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_in_a_terminal_the_row_names_the_check_the_regression_checks_and_the_merge(fake_api, tmp_path, jobs) -> None:
    project = init_repo(tmp_path / "project")
    slow = "sleep 1.5 && test -f features/{id}.txt"  # long enough for a few screens of each phase
    spec = write_spec(project, 2, verify=slow, extra={"feat-02": {"depends_on": ["feat-01"]}})
    env = cli_env(fake_api, CI="", TERM="xterm-256color", COLUMNS="160", LINES="50")
    env.pop("NO_COLOR", None)

    code, screens = _snapshots_in_tmux(tmp_path, orchestrate_command("run", str(spec), "--jobs", jobs), env, project)

    assert code == 0, screens[-1]
    rows = [line for screen in screens for line in screen.splitlines()]
    assert any(re.search(r"feat-01 +attempt 1/3 +check +0m0\ds", row) for row in rows), screens
    assert any(re.search(r"feat-02 +attempt 1/3 +regression [01]/1 +0m0\ds", row) for row in rows), screens
    assert any(re.search(r"final verification [012]/2", row) for row in rows), screens
    if jobs == "2":
        assert any(re.search(r"feat-0\d +attempt 1/3 +merging", row) for row in rows), screens
