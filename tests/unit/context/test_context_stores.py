"""The four context stores: what is recorded survives a restart, and a damaged store file is
set aside, reported, and never stops the run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from context_agent.project_memory import ContextAgent
from orchestrator.store.disk.paths import ProjectPaths

REPORT = {
    "summary": "Added the Todo model.",
    "decisions": ["Todo ids are UUID4 strings"],
    "constraints": ["Standard library only"],
    "notes": "",
}
FAILED_CHECK = {
    "command": "pytest -q", "success": False, "exitCode": 1,
    "output": "E   AssertionError: expected 3 items", "error": None, "skipped": False, "attempt": 1,
}


def _agent(root: Path, events: list[tuple[str, dict[str, Any]]]) -> ContextAgent:
    return ContextAgent(root, on_event=lambda kind, data: events.append((kind, data)))


def test_recorded_memory_is_there_for_a_new_agent_on_the_same_project(tmp_path: Path) -> None:
    events: list[tuple[str, dict[str, Any]]] = []
    first = _agent(tmp_path, events)
    first.record_report("todo-model", REPORT)
    first.record_failure("todo-model", 1, FAILED_CHECK)
    first.record_prevention("todo-model", "Return a list, not a generator.")

    injection = _agent(tmp_path, events).get_injection("todo-api")

    assert [d.text for d in injection.decisions] == ["Todo ids are UUID4 strings"]
    assert [c.description for c in injection.constraints] == ["Standard library only"]
    # Resolved (todo-model passed since), so no longer injected into an unrelated feature; stored still.
    assert injection.failures == []
    (kept,) = json.loads(ProjectPaths.for_project(tmp_path).context.failure_memory.read_text())["failures"]
    assert kept["prevention"] == "Return a list, not a generator." and kept["resolved"] is True
    assert "Added the Todo model." in injection.summary
    assert events == []


def test_store_files_use_camel_case_keys_and_each_decision_names_its_feature(tmp_path: Path) -> None:
    agent = _agent(tmp_path, [])
    agent.record_report("todo-model", REPORT)
    agent.record_failure("todo-model", 1, FAILED_CHECK)
    agent.summarize(["todo-model"], "end", use_model=False)  # folds the report into the stores
    paths = ProjectPaths.for_project(tmp_path)

    decisions = json.loads(paths.context.key_decisions.read_text(encoding="utf-8"))
    failures = json.loads(paths.context.failure_memory.read_text(encoding="utf-8"))

    assert decisions["decisions"][0]["featureId"] == "todo-model"
    assert "nextSeq" in decisions
    failure = failures["failures"][0]
    assert failure["description"] and failure["prevention"]
    assert failure["featureId"] == "todo-model" and failure["exitCode"] == 1
    assert paths.context.active_constraints.exists() and paths.context.running_summary.exists()


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(b"{not json", id="bad-json"),
        pytest.param(b'{"decisions": {"oops": 1}}', id="wrong-shape"),
        pytest.param(b"[1, 2, 3]", id="not-an-object"),
        pytest.param('{"decisions": []}'.encode("utf-16"), id="not-utf8"),
    ],
)
def test_a_corrupted_store_is_set_aside_reported_and_the_agent_carries_on(tmp_path: Path, content: bytes) -> None:
    paths = ProjectPaths.for_project(tmp_path)
    paths.context.directory.mkdir(parents=True)
    paths.context.key_decisions.write_bytes(content)
    events: list[tuple[str, dict[str, Any]]] = []
    agent = _agent(tmp_path, events)

    agent.record_report("todo-model", REPORT)
    injection = agent.get_injection("todo-model")

    kinds = [kind for kind, _ in events]
    assert kinds == ["context.store_corrupt"]
    backup = Path(events[0][1]["backup"])
    assert backup.parent == paths.backups_dir and backup.read_bytes() == content
    assert "key-decisions.json" in events[0][1]["message"]
    # The store was read as empty, with the new decision on it.
    assert injection.decisions[0].text == "Todo ids are UUID4 strings"
    agent.summarize(["todo-model"], "end", use_model=False)
    assert agent.get_injection("todo-model").decisions[0].text == "Todo ids are UUID4 strings"


def test_every_store_damaged_still_gives_an_injection_and_a_summary(tmp_path: Path) -> None:
    paths = ProjectPaths.for_project(tmp_path)
    paths.context.directory.mkdir(parents=True)
    for path in (paths.context.running_summary, paths.context.key_decisions, paths.context.failure_memory, paths.context.active_constraints):
        path.write_text("garbage", encoding="utf-8")
    events: list[tuple[str, dict[str, Any]]] = []
    agent = _agent(tmp_path, events)

    assert agent.get_injection("x").token_count == 0
    assert len([kind for kind, _ in events if kind == "context.store_corrupt"]) == 4
    assert len(list(paths.backups_dir.iterdir())) == 4


def test_without_an_event_handler_warnings_go_to_stderr_as_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = ProjectPaths.for_project(tmp_path)
    paths.context.directory.mkdir(parents=True)
    paths.context.failure_memory.write_text("{", encoding="utf-8")

    ContextAgent(tmp_path).get_injection("x")

    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("warning: context agent: failure-memory.json")


def test_a_failing_event_handler_does_not_break_the_agent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = ProjectPaths.for_project(tmp_path)
    paths.context.directory.mkdir(parents=True)
    paths.context.failure_memory.write_text("{", encoding="utf-8")

    def broken(kind: str, data: dict[str, Any]) -> None:
        raise RuntimeError("event log is full")

    agent = ContextAgent(tmp_path, on_event=broken)
    agent.record_report("a", REPORT)

    assert agent.get_injection("a").decisions
    assert "event handler failed" in capsys.readouterr().err


def test_an_unwritable_context_directory_is_reported_not_raised(tmp_path: Path) -> None:
    paths = ProjectPaths.for_project(tmp_path)
    paths.autonomous.mkdir()
    paths.context.directory.write_text("a file where the directory should be", encoding="utf-8")
    events: list[tuple[str, dict[str, Any]]] = []
    agent = _agent(tmp_path, events)

    agent.record_report("a", REPORT)
    agent.record_failure("a", 1, FAILED_CHECK)
    result = agent.summarize(["a"], "end")

    assert result.success is False and result.error
    assert {kind for kind, _ in events} >= {"context.record_failed"}
