"""`WorkingMemory.append` takes a typed entry (`memory_entries`) and stamps its time; the lines it
writes keep the spec's keys (section 7), as the keyword-argument appends wrote them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from orchestrator.store.memory_entries import CheckEvent, Insight, StatusEvent, TextInput, TextOutput, ToolEvent
from orchestrator.store.working_memory import WorkingMemory
from shared_base.check_result import CheckResult


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_each_entry_is_written_with_its_spec_keys_and_a_time_stamped_on_append(tmp_path: Path) -> None:
    memory = WorkingMemory(tmp_path / "working-memory.jsonl")
    check = CheckResult(command="pytest -q", success=False, exit_code=1, output="E  boom\n", attempt=1)
    entries = [
        StatusEvent(feature_id="f1", status="in_progress", attempt=1),
        TextInput(feature_id="f1", attempt=1, text="build it"),
        ToolEvent(feature_id="f1", tool="bash", summary="ls", is_error=False),
        TextOutput(feature_id="f1", attempt=1, stop="end_turn", text="done", report=None),
        CheckEvent(feature_id="f1", check=check),
        StatusEvent(feature_id="f1", status="failed", attempts=3),
        Insight(trigger="interval", feature_ids=["f1"], summary="s", success=True, source="model"),
    ]
    for entry in entries:
        memory.append(entry)
    lines = _lines(memory.path)
    stamps = [line.pop("ts_ms") for line in lines]
    assert stamps == sorted(set(stamps)) and all(isinstance(ts, int) and ts > 0 for ts in stamps)
    assert all(entry.ts_ms == 0 for entry in entries)  # the entry given is left as it was
    assert lines == [
        {"type": "wm_event", "event": "status", "featureId": "f1", "status": "in_progress", "attempt": 1},
        {"type": "text_input", "featureId": "f1", "attempt": 1, "text": "build it"},
        {"type": "wm_event", "event": "tool_call", "featureId": "f1", "tool": "bash", "summary": "ls", "isError": False},
        {"type": "text_output", "featureId": "f1", "attempt": 1, "stop": "end_turn", "text": "done", "report": None},
        {"type": "wm_event", "event": "verification", "featureId": "f1", "command": "pytest -q", "success": False,
         "exitCode": 1, "output": "E  boom\n", "error": None, "skipped": False, "attempt": 1},
        {"type": "wm_event", "event": "status", "featureId": "f1", "status": "failed", "attempts": 3},
        {"type": "wm_insight", "featureIds": ["f1"], "trigger": "interval", "summary": "s", "success": True,
         "source": "model"},
    ]
    # `type` and `ts_ms` first, then `event` and the feature: the order replay and scripts see.
    assert list(json.loads(memory.path.read_text().splitlines()[4]))[:5] == [
        "type", "ts_ms", "event", "featureId", "command"]


def test_an_undeclared_field_is_refused_and_a_disabled_memory_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(ValidationError):
        StatusEvent(feature_id="f1", status="passed", atempt=1)  # type: ignore[call-arg]
    memory = WorkingMemory(tmp_path / "working-memory.jsonl", enabled=False)
    memory.append(TextInput(feature_id="f1", attempt=1, text="x"))
    assert not memory.path.exists()
