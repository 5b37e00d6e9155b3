"""Run state on disk: snapshot plus journal, and what is recovered when they are gone or damaged."""

from __future__ import annotations

import json
from pathlib import Path

from orchestrator.llm.costs.pricing import TokenUsage
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.run_state import RunState
from orchestrator.store.state import StateStore


def store(tmp_path: Path) -> tuple[StateStore, list[str]]:
    warnings: list[str] = []
    return StateStore(ProjectPaths.for_project(tmp_path), on_warning=warnings.append), warnings


def passed(state: RunState, feature_id: str, cost: float = 0.5) -> None:
    entry = state.feature(feature_id)
    entry.status, entry.attempts, entry.cost_usd = "passed", 1, cost
    entry.tokens = TokenUsage(input=100, output=50)
    state.totals = state.totals.model_copy(
        update={"cost_usd": state.totals.cost_usd + cost, "tokens": state.totals.tokens + entry.tokens})


def write_log(paths: ProjectPaths, feature_id: str, status: str = "passed", cost: float = 0.5) -> None:
    paths.logs_dir.mkdir(parents=True, exist_ok=True)
    log = {"id": feature_id, "status": status, "attempts": 1, "iteration": 1, "costUsd": cost,
           "tokens": {"input": 100, "output": 50, "cacheRead": 0, "cacheWrite": 0}, "durationMs": 10}
    paths.feature_log(feature_id).write_text(json.dumps(log))


def test_the_journal_carries_changes_between_snapshots(tmp_path: Path) -> None:
    states, warnings = store(tmp_path)
    state = RunState()
    states.save(state)
    passed(state, "feat-01")
    states.record(state, "feat-01")
    passed(state, "feat-02")
    states.record(state, "feat-02")
    assert states.paths.state_journal.read_text().count("\n") == 2

    loaded, _ = store(tmp_path)
    again = loaded.load()
    assert again is not None and again.count("passed") == 2
    assert again.totals.cost_usd == state.totals.cost_usd
    assert not warnings


def test_a_torn_last_journal_line_is_normal_and_not_reported(tmp_path: Path) -> None:
    states, _ = store(tmp_path)
    state = RunState()
    states.save(state)
    passed(state, "feat-01")
    states.record(state, "feat-01")
    with open(states.paths.state_journal, "a") as handle:
        handle.write('{"feature": "feat-02", "sta')  # killed mid-append

    loaded, warnings = store(tmp_path)
    again = loaded.load()
    assert again is not None and again.feature("feat-01").status == "passed"
    assert not warnings


def test_a_deleted_state_file_is_rebuilt_from_the_logs_with_what_was_spent(tmp_path: Path) -> None:
    paths = ProjectPaths.for_project(tmp_path)
    write_log(paths, "feat-01", cost=0.25)
    write_log(paths, "feat-02", status="failed", cost=0.5)

    states, warnings = store(tmp_path)
    state = states.load()

    assert state is not None
    assert {fid: f.status for fid, f in state.features.items()} == {"feat-01": "passed", "feat-02": "failed"}
    assert state.totals.cost_usd == 0.75  # so that --max-cost still counts it
    assert state.totals.tokens.total == 300
    assert len(warnings) == 1 and "rebuilt from feature logs (1 passed features kept)" in warnings[0]
    assert "--fresh" in warnings[0]
    assert paths.state_file.exists()  # saved at once: the next reader needs no rebuild


def test_no_state_and_no_logs_is_a_new_run(tmp_path: Path) -> None:
    states, warnings = store(tmp_path)
    assert states.load() is None and not warnings


def test_a_log_that_names_another_feature_proves_nothing(tmp_path: Path) -> None:
    paths = ProjectPaths.for_project(tmp_path)
    write_log(paths, "feat-01")
    paths.feature_log("feat-02").write_text(paths.feature_log("feat-01").read_text())  # claims feat-01

    states, _ = store(tmp_path)
    state = states.rebuild_from_logs()
    assert list(state.features) == ["feat-01"]
