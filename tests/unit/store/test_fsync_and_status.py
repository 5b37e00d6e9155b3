"""The per-feature costs a long run multiplies: fsyncs (a report is no longer fsynced into the
context stores: the feature log holds it), and `orchestrate status`, which reads the state
alone and draws one line per feature with a bounded amount of work each.

Run with `-s` to see the counts.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import orchestrator.commands.listing as inspect_module
from context_agent.project_memory import ContextAgent
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.run_state import FeatureState, RunState
from orchestrator.store.state import StateStore
from tests.fsync_counter import FsyncCounter


def test_recording_a_report_costs_no_fsync(tmp_path: Path, fsyncs: FsyncCounter) -> None:
    agent = ContextAgent(tmp_path)

    agent.record_report("todo-model", {"summary": "Added the model.", "decisions": ["Ids are UUID4 strings"],
                                       "constraints": ["Standard library only"]})

    assert fsyncs.total == 0
    assert [d.text for d in agent.get_injection("todo-api").decisions] == ["Ids are UUID4 strings"]


# ---- orchestrate status -----------------------------------------------------------------------


def _big_state(paths: ProjectPaths, features: int) -> None:
    state = RunState()
    for number in range(features):
        reason = None if number % 3 else "check still failing after 3 attempt(s): " + "the widget is not ready " * 12
        state.features[f"feat-{number:05d}"] = FeatureState(status="failed" if reason else "passed", attempts=1,
                                                            reason=reason)
    StateStore(paths).save(state)


def test_status_reads_the_state_alone_and_draws_one_line_per_feature(tmp_path: Path, monkeypatch, capsys) -> None:
    paths = ProjectPaths.for_project(tmp_path)
    _big_state(paths, 3000)
    paths.logs_dir.mkdir(parents=True)

    def no_logs(path: Path) -> Any:
        raise AssertionError(f"status read a feature log: {path}")

    monkeypatch.setattr(inspect_module, "load_feature_log", no_logs)
    calls = [0]

    def count_calls(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            calls[0] += 1

    sys.setprofile(count_calls)
    try:
        inspect_module.print_status(paths, False, show_all=True)
    finally:
        sys.setprofile(None)

    out = capsys.readouterr().out
    lines = out.splitlines()
    print(f"\nstatus of 3000 features: {calls[0]} Python calls ({calls[0] / 3000:.0f} a feature), {len(lines)} lines",
          file=sys.stderr)
    for number in (0, 1, 2999):
        assert sum(f"feat-{number:05d}" in line for line in lines) == 1
    assert len(lines) == 3000 + 6  # title, header (3 lines), bottom edge, counts
    assert lines[-1].startswith("2000 passed, 1000 failed")
    # Bounded work a feature (drawing with rich took over 500 calls a row).
    assert calls[0] < 3000 * 60
