"""The run state stays small however long the run: check output is kept in the feature logs,
not the state, and the journal is folded into the snapshot before it can pass its read limit."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from orchestrator.llm.costs.pricing import TokenUsage
from orchestrator.run.checks.running.check_command import DEFAULT_OUTPUT_LIMIT
from orchestrator.store import state as state_module
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.run_state import FeatureState, RunState
from orchestrator.store.state import MAX_JOURNAL_BYTES, MAX_STATE_BYTES, StateStore
from tests.cli_helpers import read_json

LOUD_OUTPUT = "E   AssertionError: the widget is not ready\n" * 200  # well over the 4000-character tail


def _verification(status: str, attempt: int) -> dict:
    return {"command": "pytest -q tests/test_widget.py", "success": status == "passed", "exitCode": 1,
            "output": LOUD_OUTPUT[-DEFAULT_OUTPUT_LIMIT:], "error": None, "skipped": False, "attempt": attempt}


def _feature(status: str, number: int) -> FeatureState:
    return FeatureState(
        status=status, attempts=3, started_at=1_795_431_686_925, completed_at=1_795_431_687_925, iteration=number,
        text_hash="c" * 64, tokens=TokenUsage(input=123_456, output=23_456, cache_read=345_678, cache_write=45_678),
        cost_usd=0.0123456789, duration_ms=123_456, reason="check still failing after 3 attempt(s)",
        last_verification=_verification(status, 3),
    )


@pytest.fixture
def no_fsync(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about sizes, not durability."""
    monkeypatch.setattr(os, "fsync", lambda fd: None)


def test_settled_features_keep_no_check_output_in_the_saved_state(tmp_path: Path, no_fsync: None) -> None:
    paths = ProjectPaths.for_project(tmp_path)
    state = RunState()
    for number in range(2000):
        state.features[f"feat-{number:05d}"] = _feature("failed" if number % 2 else "passed", number)
    state.features["retrying"] = _feature("in_progress", 0)

    StateStore(paths).save(state)

    size = paths.state_file.stat().st_size
    saved = read_json(paths.state_file)["features"]
    print(f"\nstate of 2000 settled features with {DEFAULT_OUTPUT_LIMIT}-character check outputs: "
          f"{size / 2000:.0f} bytes a feature")
    # About 500 bytes a feature: 100,000 features stay under the 64 MiB read limit.
    assert size < 2000 * 600
    assert saved["feat-00001"]["lastVerification"]["output"] == ""
    assert saved["feat-00001"]["lastVerification"]["exitCode"] == 1
    # The feature being retried keeps its output: its next prompt shows it.
    assert saved["retrying"]["lastVerification"]["output"] == LOUD_OUTPUT[-DEFAULT_OUTPUT_LIMIT:]
    # The state in memory is untouched: the run's reports still have it.
    assert state.features["feat-00001"].last_verification.output


def test_the_journal_is_folded_before_it_passes_its_bound(
        tmp_path: Path, no_fsync: None, monkeypatch: pytest.MonkeyPatch) -> None:
    # The real bound (32 MiB) leaves a journal at its bound plus a line readable (64 MiB limit);
    # the fold itself is shown against a bound of 1 MiB, the same rule at a 32nd of the writing.
    assert MAX_JOURNAL_BYTES + 10_000 < MAX_STATE_BYTES
    bound = 2**20
    monkeypatch.setattr(state_module, "MAX_JOURNAL_BYTES", bound)
    paths = ProjectPaths.for_project(tmp_path)
    store = StateStore(paths)
    state = RunState()
    for number in range(2000):  # more features than records: the line-count rule alone would never fold
        state.features[f"feat-{number:05d}"] = FeatureState()
    store.save(state)
    largest = folds = 0

    for number in range(1000):  # retries of loud checks: about 4.5 KB a journal line, 4.5 MB in all
        feature_id = f"feat-{number:05d}"
        state.features[feature_id] = _feature("in_progress", number)
        before = paths.state_journal.stat().st_size if paths.state_journal.exists() else 0
        store.record(state, feature_id)
        after = paths.state_journal.stat().st_size if paths.state_journal.exists() else 0
        folds += after < before
        largest = max(largest, after)

    print(f"\njournal at most {largest / 2**20:.1f} MiB over 1000 loud records, {folds} folds (bound 1 MiB)")
    assert folds >= 3
    assert largest < bound + 10_000
    loaded = StateStore(paths).load()
    assert loaded is not None and loaded.features["feat-00999"].last_verification.output
