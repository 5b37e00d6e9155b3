"""`orchestrate logs` (the list) takes its rows from the state, and prints what reading every
log gave before (issue 18: the list at 10,000 features must stay under a second)."""

from __future__ import annotations

import json
from pathlib import Path

import orchestrator.commands.listing as listing
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.state_peek import peek_features


def test_the_state_is_read_with_its_journal_and_a_damaged_one_gives_none(tmp_path: Path) -> None:
    paths = ProjectPaths.for_project(tmp_path)
    paths.state_file.parent.mkdir(parents=True)
    assert peek_features(paths) is None
    paths.state_file.write_text(json.dumps({"features": {"a": {"status": "failed"}, "b": {"status": "pending"}}}))
    paths.state_journal.write_text(
        json.dumps({"feature": "b", "state": {"status": "passed", "attempts": 1}}) + "\n"
        + json.dumps({"spend": {"kind": "call"}}) + "\n" + '{"feature": "a", "sta'  # torn by a kill
    )
    assert peek_features(paths) == {"a": {"status": "failed"}, "b": {"status": "passed", "attempts": 1}}
    paths.state_file.write_text("{")
    assert peek_features(paths) is None


def test_an_entry_not_as_the_run_writes_it_sends_the_list_to_the_log() -> None:
    assert listing._row_from_state({"status": "passed", "attempts": 2, "costUsd": 0.00012345,
                                    "tokens": {"input": 1, "output": 2, "cacheRead": 1000, "cacheWrite": 3}}) \
        == ["passed", "2", "1,006", "0.0001"]
    for entry in (None, [], {"attempts": "2"}, {"costUsd": "1"}, {"tokens": {"input": 1.5}}, {"tokens": []}):
        assert listing._row_from_state(entry) is None, entry  # type: ignore[arg-type]


