"""The feature log's one model: the file it writes is the JSON the product spec fixes, and it reads back."""

from __future__ import annotations

import json
from pathlib import Path

from orchestrator.llm.costs.pricing import TokenUsage
from orchestrator.spec.feature_spec import Feature
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.feature_log import (
    ReplayStats,
    build_feature_log,
    find_feature_log,
    load_feature_log,
    write_feature_log,
)
from orchestrator.store.records import AttemptRecord
from orchestrator.store.run_state import FeatureState

CHECK = {"command": "pytest", "success": True, "exitCode": 0, "output": "ok", "error": None, "skipped": False,
         "attempt": 2}


def test_the_log_is_written_with_the_keys_and_order_of_the_format(tmp_path: Path) -> None:
    paths = ProjectPaths.for_project(tmp_path)
    entry = FeatureState(status="passed", attempts=2, started_at=1, completed_at=2, iteration=3,
                         tokens=TokenUsage(input=10, output=5), cost_usd=0.1234567, duration_ms=9,
                         last_verification=CHECK)
    history = [
        {"attempt": 1, "stop": "interrupted", "verification": None},
        {"attempt": 2, "stop": "end_turn", "turns": 3, "toolCalls": 4, "maskedOutputs": 0, "error": None,
         "verification": CHECK},
    ]
    log = build_feature_log(
        Feature(id="feat-01", name="One", category="core", description="d"), entry, model="m", strategy="replay",
        check_command="pytest", attempts_log=[AttemptRecord.model_validate(r) for r in history],
        report={"summary": "did it", "anything": [1]},
        replay_stats=ReplayStats(total_lines=2, parsed_entries=2),
    )
    write_feature_log(paths, log)

    expected = {
        "id": "feat-01", "name": "One", "category": "core", "status": "passed", "startedAt": 1, "completedAt": 2,
        "iteration": 3, "attempts": 2, "verification": CHECK, "verified": True,
        "tokens": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0}, "costUsd": 0.123457,
        "durationMs": 9, "model": "m", "contextStrategy": "replay", "report": {"summary": "did it", "anything": [1]},
        "reason": None, "attemptHistory": history,
        "replay": {"total_lines": 2, "parsed_entries": 2, "skipped_invalid_json": 0, "skipped_invalid_shape": 0},
    }
    text = paths.feature_log("feat-01").read_text()
    assert text == json.dumps(expected, indent=2, ensure_ascii=False) + "\n"
    again = load_feature_log(paths.feature_log("feat-01"))
    assert again == log and again.summary() == "did it" and again.attempt_history[0].turns == 0


def test_a_log_without_replay_statistics_has_no_replay_key_and_a_missing_log_is_none(tmp_path: Path) -> None:
    paths = ProjectPaths.for_project(tmp_path)
    log = build_feature_log(Feature(id="feat-02", name="Two", description="d"), FeatureState(), model="m",
                            strategy="window", check_command=None, attempts_log=[], report=None)
    write_feature_log(paths, log)

    assert "replay" not in json.loads(paths.feature_log("feat-02").read_text())
    assert find_feature_log(paths, "feat-02") == log
    assert find_feature_log(paths, "feat-03") is None
