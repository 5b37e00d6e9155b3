"""Recording as features happen: the next feature already benefits, the stores keep their
caps, and repeats do not crowd out real items."""

from __future__ import annotations

import json
from pathlib import Path

from context_agent.budget import MAX_STORED_DECISIONS, MAX_STORED_FAILURES
from context_agent.project_memory import ContextAgent
from orchestrator.store.disk.paths import ProjectPaths

PYTEST_FAILURE = """F                                                                [100%]
=================================== FAILURES ===================================
___________________________________ test_done __________________________________

    def test_done():
>       assert Todo(title='x').done is False
E       AttributeError: 'Todo' object has no attribute 'done'

tests/test_model.py:4: AttributeError
=========================== short test summary info ============================
FAILED tests/test_model.py::test_done - AttributeError: 'Todo' object has no attribute 'done'
1 failed in 0.02s
"""


def _check(output: str, command: str = "pytest -q", exit_code: int | None = 1) -> dict[str, object]:
    return {"command": command, "success": False, "exitCode": exit_code, "output": output,
            "error": None, "skipped": False, "attempt": 1}


def _stored(path: Path, key: str) -> list[dict[str, object]]:
    return json.loads(path.read_text(encoding="utf-8"))[key]


def test_a_failed_check_is_remembered_by_its_error_line_not_the_noise(tmp_path: Path) -> None:
    agent = ContextAgent(tmp_path)
    agent.record_failure("todo-model", 1, _check(PYTEST_FAILURE))

    failure = agent.get_injection("todo-api").failures[0]

    assert failure.description == "tests/test_model.py::test_done failed: AttributeError: 'Todo' object has no attribute 'done'"
    assert failure.prevention == "make `pytest -q` pass before reporting done"


def test_the_passing_attempt_s_lesson_replaces_the_default_prevention(tmp_path: Path) -> None:
    agent = ContextAgent(tmp_path)
    agent.record_failure("todo-model", 1, _check(PYTEST_FAILURE))
    agent.record_failure("todo-model", 2, _check("ModuleNotFoundError: No module named 'todo'"))

    agent.record_prevention("todo-model", "Give Todo a done field defaulting to False.")

    failures = _stored(ProjectPaths.for_project(tmp_path).context.failure_memory, "failures")
    assert [f["prevention"] for f in failures] == ["Give Todo a done field defaulting to False."] * 2


def test_the_same_failure_on_every_retry_takes_one_slot(tmp_path: Path) -> None:
    agent = ContextAgent(tmp_path)
    for attempt in (1, 2, 3):
        agent.record_failure("todo-model", attempt, _check(PYTEST_FAILURE))

    stored = _stored(ProjectPaths.for_project(tmp_path).context.failure_memory, "failures")

    assert len(stored) == 1 and stored[0]["attempt"] == 3


def test_failure_memory_keeps_the_ten_most_recent(tmp_path: Path) -> None:
    agent = ContextAgent(tmp_path)
    for number in range(15):
        agent.record_failure(f"f{number}", 1, _check(f"AssertionError: case {number}"))

    stored = _stored(ProjectPaths.for_project(tmp_path).context.failure_memory, "failures")

    assert len(stored) == MAX_STORED_FAILURES
    assert {f["featureId"] for f in stored} == {f"f{n}" for n in range(5, 15)}


def test_key_decisions_keep_the_twenty_most_recent(tmp_path: Path) -> None:
    agent = ContextAgent(tmp_path)
    for number in range(30):
        agent.record_report(f"f{number}", {"decisions": [f"decision number {number}"]})

    stored = agent.memory().decisions.decisions

    assert len(stored) == MAX_STORED_DECISIONS
    assert {d.text for d in stored} == {f"decision number {n}" for n in range(10, 30)}


def test_a_decision_restated_later_counts_as_recent_again(tmp_path: Path) -> None:
    agent = ContextAgent(tmp_path)
    agent.record_report("f0", {"decisions": ["Dates are ISO 8601 strings"]})
    for number in range(1, 25):
        agent.record_report(f"f{number}", {"decisions": [f"decision number {number}"]})
        if number == 15:
            agent.record_report("f15", {"decisions": [f"decision number {number}", "dates are ISO-8601 strings."]})

    texts = {d.text for d in agent.memory().decisions.decisions}

    # Still there after 24 newer decisions, in its original wording, once.
    assert "Dates are ISO 8601 strings" in texts and "dates are ISO-8601 strings." not in texts


def test_constraints_under_the_limit_are_never_evicted_and_never_duplicated(tmp_path: Path) -> None:
    agent = ContextAgent(tmp_path)
    for number in range(60):
        agent.record_report(f"f{number}", {"constraints": [f"Rule {number} holds", "Standard library only"]})
    agent.summarize([], "test", use_model=False)

    stored = _stored(ProjectPaths.for_project(tmp_path).context.active_constraints, "constraints")

    assert len(stored) == 61
    assert sum(c["description"] == "Standard library only" for c in stored) == 1


def test_reports_in_odd_shapes_are_read_not_rejected(tmp_path: Path) -> None:
    agent = ContextAgent(tmp_path)
    agent.record_report("a", {"summary": ["Did one thing", "and another"], "decisions": "One decision",
                              "constraints": [{"description": "Constraint as object"}, 42, None]})
    agent.record_report("b", "not even a mapping")  # type: ignore[arg-type]

    injection = agent.get_injection("a")

    assert [d.text for d in injection.decisions] == ["One decision"]
    assert [c.description for c in injection.constraints] == ["Constraint as object"]
    assert "Did one thing; and another" in injection.summary


def test_a_long_decision_is_stored_whole_sentences_within_its_cap(tmp_path: Path) -> None:
    agent = ContextAgent(tmp_path)
    long = "Use SQLite through the standard library. " + "Padding sentence with many words here. " * 20
    agent.record_report("a", {"decisions": [long]})

    text = agent.get_injection("a").decisions[0].text

    assert text.startswith("Use SQLite through the standard library.") and text.endswith(".")
    assert "\n" not in text and len(text) < len(long)
