"""Issue 27: the live view names what each feature (or the run) is doing, with the phase's own clock."""

from __future__ import annotations

import io
import time

from rich.console import Console

from orchestrator.commands.rendering.live_view import LiveRenderer
from orchestrator.commands.rendering.output import PlainRenderer
from orchestrator.llm.costs.pricing import TokenUsage
from orchestrator.store.event_kinds import ApiCall, FeatureFinished, FeatureStarted
from orchestrator.store.events import EventSink


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
    from orchestrator.run.checks.running.check_pool import run_checks
    from shared_base.check_result import CheckResult

    seen: list[tuple[int, int]] = []

    def runner(command: str, workspace: object) -> CheckResult:
        return CheckResult(command=command, success=True, exit_code=0, attempt=0)

    checks = [("a", "pytest"), ("b", "true"), ("c", "pytest")]
    run_checks(checks, tmp_path, runner, 2, put_back=False, on_progress=lambda done, total: seen.append((done, total)))

    assert seen[0] == (0, 3) and seen[-1] == (3, 3) and len(seen) == 3
    assert sorted(seen) == seen


# ---- in a real terminal (tmux), through the CLI ------------------------------------------------




def test_after_a_resume_the_progress_row_counts_the_selection_across_runs() -> None:
    from orchestrator.store.event_kinds import RunStarted

    sink, renderer = _sink()
    try:
        sink.emit(RunStarted(run_id="r", spec="s", project="p", selected=8, already_passed=3, model="m",
                             context="compressed", spent_tokens=12_000, spent_usd=0.25))
        shown = _screen(renderer)
        assert "3 of 8 done" in shown and "12,000 tokens" in shown and "$0.2500" in shown
        sink.emit(FeatureStarted(id="case", name="case", attempt=1, max_attempts=3, index=4, total=8))
        sink.emit(FeatureFinished(id="case", status="passed", attempts=1, duration_ms=1, tokens=15,
                                  usage=TokenUsage(input=10, output=5), cost_usd=0.01))
        assert "4 of 8 done" in _screen(renderer)
    finally:
        renderer.close()
