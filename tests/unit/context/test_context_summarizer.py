"""The summarizer: one structured-output call whose answer is merged as a delta, and a
deterministic fallback whenever the call or its answer fails."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from context_agent.budget import SUMMARY_BUDGET
from context_agent.project_memory import ContextAgent
from context_agent.summarizer.summarizer_call import SummarizerAnswer, answer_schema
from orchestrator.run.attempt.context_view import feature_reader
from orchestrator.store.disk.atomic import write_json_atomic
from orchestrator.store.disk.paths import ProjectPaths


def fake_message(text: str, stop_reason: str = "end_turn") -> SimpleNamespace:
    """Shaped like an SDK `Message`."""
    return SimpleNamespace(
        content=[SimpleNamespace(type="text", text=text)], stop_reason=stop_reason,
        usage=SimpleNamespace(input_tokens=100, output_tokens=50),
    )


def answer(**fields: Any) -> str:
    body: dict[str, Any] = {
        "summary": "A todo API. The model is done.", "newDecisions": [], "retiredDecisionIds": [],
        "newConstraints": [], "retiredConstraintIds": [], "newFailures": [], "preventions": [],
    }
    body.update(fields)
    return json.dumps(body)


class Recorder:
    """A model_call that returns canned replies and keeps the requests."""

    def __init__(self, *replies: Any) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []

    def __call__(self, **kwargs: Any) -> Any:
        self.requests.append(kwargs)
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if isinstance(reply, BaseException):
            raise reply
        return fake_message(reply) if isinstance(reply, str) else reply


def _write_log(root: Path, feature_id: str, **fields: Any) -> None:
    log = {"id": feature_id, "name": feature_id.title(), "category": "backend", "status": "passed",
           "attempts": 1, "verification": {"command": "pytest -q", "success": True, "exitCode": 0,
                                            "output": "1 passed", "error": None, "skipped": False, "attempt": 1},
           "report": {"summary": f"Built {feature_id}.", "decisions": [], "constraints": [], "notes": ""}}
    log.update(fields)
    write_json_atomic(ProjectPaths.for_project(root).feature_log(feature_id), log)


def _agent(root: Path, call: Any, events: list[tuple[str, dict[str, Any]]] | None = None) -> ContextAgent:
    sink = events if events is not None else []
    return ContextAgent(root, read_feature=feature_reader(ProjectPaths.for_project(root)), model_call=call, summarizer_model="claude-test-small",
                        on_event=lambda kind, data: sink.append((kind, data)))


def _stored_summary(root: Path) -> dict[str, Any]:
    return json.loads(ProjectPaths.for_project(root).context.running_summary.read_text(encoding="utf-8"))


def test_the_request_asks_for_the_answer_schema_and_carries_stores_and_logs(tmp_path: Path) -> None:
    call = Recorder(answer())
    agent = _agent(tmp_path, call)
    agent.record_report("todo-model", {"decisions": ["Ids are UUID4 strings"], "constraints": ["Stdlib only"]})
    _write_log(tmp_path, "todo-model")

    agent.summarize(["todo-model"], "every-5")

    request = call.requests[0]
    assert request["model"] == "claude-test-small"
    assert request["output_config"] == {"format": {"type": "json_schema", "schema": answer_schema()}}
    assert answer_schema()["additionalProperties"] is False
    prompt = request["messages"][0]["content"]
    assert "[D1] (Feature todo-model) Ids are UUID4 strings" in prompt
    assert "[C1] Stdlib only" in prompt
    assert '"report": {"summary": "Built todo-model."' in prompt


def test_a_good_answer_replaces_the_summary_and_adds_only_new_items(tmp_path: Path) -> None:
    call = Recorder(answer(
        summary="Todo API: model done with UUID ids.",
        newDecisions=[{"text": "Timestamps are UTC epoch milliseconds", "featureId": "todo-model"},
                      {"text": "Ids are UUID4 strings.", "featureId": "todo-model"}],  # a restatement
        newConstraints=[{"description": "No network access in tests", "featureId": ""}],
    ))
    agent = _agent(tmp_path, call)
    agent.record_report("todo-model", {"summary": "Built it.", "decisions": ["Ids are UUID4 strings"]})

    result = agent.summarize(["todo-model"], "every-5")

    assert result.success is True and result.error is None
    assert (result.new_decisions, result.new_constraints, result.new_failures) == (1, 1, 0)
    assert result.source == "model" and result.summary == "Todo API: model done with UUID ids."
    stored = _stored_summary(tmp_path)
    assert stored["summary"] == "Todo API: model done with UUID ids."
    assert stored["recent"] == [] and stored["featuresSummarized"] == 1 and stored["source"] == "model"
    injection = agent.get_injection("next")
    assert [d.text for d in injection.decisions] == [
        "Timestamps are UTC epoch milliseconds", "Ids are UUID4 strings"]


def test_only_explicitly_retired_items_leave_the_stores(tmp_path: Path) -> None:
    agent = _agent(tmp_path, None)
    agent.record_report("a", {"decisions": ["Use JSON files", "Port 8000"], "constraints": ["Stdlib only", "No ORM"]})
    agent.model_call = Recorder(answer(
        retiredDecisionIds=["D1"], retiredConstraintIds=["C2", "C99"],  # C2 is "No ORM"
        newDecisions=[{"text": "Use SQLite instead of JSON files", "featureId": "a"}],
    ))

    result = agent.summarize(["a"], "every-5")

    injection = agent.get_injection("b")
    assert {d.text for d in injection.decisions} == {"Port 8000", "Use SQLite instead of JSON files"}
    assert [c.description for c in injection.constraints] == ["Stdlib only"]
    assert (result.retired_decisions, result.retired_constraints) == (1, 1)
    retired = json.loads(ProjectPaths.for_project(tmp_path).context.active_constraints.read_text(encoding="utf-8"))["retired"]
    assert retired[0]["description"] == "No ORM" and retired[0]["retiredBy"] == "summarizer:every-5"


def test_consolidating_constraints_replaces_several_with_one(tmp_path: Path) -> None:
    agent = _agent(tmp_path, None)
    agent.record_report("a", {"constraints": ["Format code with black", "Sort imports with isort"]})
    agent.model_call = Recorder(answer(
        retiredConstraintIds=["C1", "C2"],
        newConstraints=[{"description": "Format code with black and sort imports with isort", "featureId": "a"}],
    ))

    agent.summarize(["a"], "every-5")

    assert [c.description for c in agent.get_injection("b").constraints] == [
        "Format code with black and sort imports with isort"]


def test_a_summarizer_failure_gives_a_prevention_to_the_failure_it_explains(tmp_path: Path) -> None:
    agent = _agent(tmp_path, None)
    agent.record_failure("a", 1, {"command": "pytest -q", "exitCode": 1, "output": "E   KeyError: 'id'"})
    agent.model_call = Recorder(answer(
        newFailures=[{"featureId": "a", "description": "KeyError id", "prevention": "Check the id key exists"}],
    ))

    result = agent.summarize(["a"], "every-5")

    failures = agent.get_injection("b").failures
    assert len(failures) == 1 and failures[0].prevention == "Check the id key exists"
    assert result.new_failures == 0 and result.preventions == 1


@pytest.mark.parametrize(
    ("reply", "error_part"),
    [
        pytest.param(RuntimeError("HTTP 500 Internal Server Error"), "HTTP 500", id="call-raises"),
        pytest.param("{this is not json", "not JSON", id="invalid-json"),
        pytest.param(json.dumps({"summary": "x", "newDecisions": "oops"}), "does not match the schema", id="wrong-shape"),
        pytest.param(fake_message('{"summary": "cut', stop_reason="max_tokens"), "incomplete", id="truncated"),
        pytest.param(SimpleNamespace(content=[]), "no text", id="no-text"),
    ],
)
def test_when_the_summarizer_fails_a_fallback_summary_is_written_and_reported(
    tmp_path: Path, reply: Any, error_part: str
) -> None:
    events: list[tuple[str, dict[str, Any]]] = []
    agent = _agent(tmp_path, Recorder(reply), events)
    agent.record_report("todo-model", {"summary": "Added the Todo model.", "decisions": ["Ids are UUID4"]})
    _write_log(tmp_path, "todo-model", attempts=2)
    _write_log(tmp_path, "todo-api", status="failed", attempts=3, report={"summary": "Tried the API."},
               verification={"command": "pytest -q", "success": False, "exitCode": 1,
                             "output": "E   ImportError: cannot import name 'app'"})

    result = agent.summarize(["todo-model", "todo-api"], "every-5")

    assert result.success is False and error_part in result.error
    assert result.source == "fallback"
    assert [kind for kind, _ in events] == ["summarizer.failed"]
    assert error_part in events[0][1]["error"]
    summary = _stored_summary(tmp_path)["summary"]
    assert "- todo-model (Todo-Model): passed after 2 attempts. Built todo-model." in summary
    assert "- todo-api (Todo-Api): failed after 3 attempts. Tried the API. Last check:" in summary
    assert "ImportError: cannot import name 'app'" in summary
    assert agent.get_injection("x").decisions[0].text == "Ids are UUID4"


def test_no_model_configured_falls_back_too(tmp_path: Path) -> None:
    events: list[tuple[str, dict[str, Any]]] = []
    result = _agent(tmp_path, None, events).summarize(["a"], "end")

    assert result.success is False and "no summarizer model" in result.error
    assert "a: status unknown (no usable log)." in result.summary
    assert [kind for kind, _ in events] == ["summarizer.failed"]


def test_missing_or_corrupt_logs_do_not_stop_the_summary(tmp_path: Path) -> None:
    paths = ProjectPaths.for_project(tmp_path)
    paths.logs_dir.mkdir(parents=True)
    paths.feature_log("broken").write_bytes(b"\xff\xfe not a log")
    paths.feature_log("listy").write_text("[1, 2]", encoding="utf-8")
    call = Recorder(answer())

    result = _agent(tmp_path, call).summarize(["broken", "listy", "absent"], "end")

    assert result.success is True
    prompt = call.requests[0]["messages"][0]["content"]
    assert '"logProblem": "no log"' in prompt and "unreadable log" in prompt and "not a JSON object" in prompt


def test_an_over_budget_summary_keeps_the_old_one_and_appends_the_new_features(tmp_path: Path) -> None:
    events: list[tuple[str, dict[str, Any]]] = []
    agent = _agent(tmp_path, Recorder(answer(summary="First summary.")), events)
    agent.summarize([], "every-5")
    _write_log(tmp_path, "b")
    agent.model_call = Recorder(answer(summary="word " * (SUMMARY_BUDGET + 10),
                                       newConstraints=[{"description": "Keep it", "featureId": "b"}]))

    result = agent.summarize(["b"], "every-5")

    assert result.success is True and result.source == "fallback" and result.new_constraints == 1
    assert _stored_summary(tmp_path)["summary"] == (
        "First summary.\n\nFeatures since the previous summary:\n- b (B): passed. Built b.")
    assert [kind for kind, _ in events] == ["summarizer.summary_rejected"]


def test_the_schema_model_parses_a_full_answer() -> None:
    parsed = SummarizerAnswer.model_validate_json(answer(
        newDecisions=[{"text": "t", "featureId": "f"}], preventions=[{"failureId": "F1", "prevention": "p"}]))

    assert parsed.new_decisions[0].feature_id == "f" and parsed.preventions[0].failure_id == "F1"
