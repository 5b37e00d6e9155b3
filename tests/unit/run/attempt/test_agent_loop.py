"""The agent loop through its seams (`AgentSession`: a model client over a scripted SDK, a tool
context on a directory, an event callback): how an attempt ends, and what the model is sent back."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from orchestrator.config import RunConfig
from orchestrator.llm.client import ModelClient
from orchestrator.llm.costs.spend import Spend
from orchestrator.run.attempt.agent_loop import REPORT_REMINDER, AgentEvent, AgentSession, run_agent
from orchestrator.store.event_kinds import ToolCall
from orchestrator.tools.context import ToolContext
from tests.environments import unsandboxed
from tests.sdk_doubles import StreamsCreate

MODEL = "claude-sonnet-4-5"
EDITOR = "str_replace_based_edit_tool"


class _Scripted(StreamsCreate):
    """Answers each call with the next scripted message; keeps the requests."""

    def __init__(self, answers: list[Any]) -> None:
        self.messages, self.answers, self.requests = self, list(answers), []

    def create(self, **request: Any) -> Any:
        self.requests.append(request)
        return self.answers.pop(0)


def _answer(*blocks: Any, stop: str = "tool_use") -> SimpleNamespace:
    usage = SimpleNamespace(input_tokens=300, output_tokens=20, cache_read_input_tokens=0, cache_creation_input_tokens=0)
    return SimpleNamespace(content=list(blocks), usage=usage, stop_reason=stop)


def _tool(name: str, tool_input: dict[str, Any], tool_id: str) -> SimpleNamespace:
    return SimpleNamespace(type="tool_use", id=tool_id, name=name, input=tool_input)


def _text(text: str) -> SimpleNamespace:
    return SimpleNamespace(type="text", text=text)


def _session(tmp_path: Path, sdk: _Scripted, events: list[AgentEvent], max_turns: int = 10) -> AgentSession:
    return AgentSession(
        client=ModelClient(RunConfig(max_cost=100.0).client_settings(), sdk, Spend()), model=MODEL,
        system="You build software.", tool_context=ToolContext(environment=unsandboxed(tmp_path)),
        max_turns=max_turns, max_output_tokens=1024, mask_after_tokens=1_000_000, on_event=events.append,
    )


def test_a_tool_call_then_a_report_ends_the_attempt_reported_with_the_tool_run(tmp_path: Path) -> None:
    sdk = _Scripted([
        _answer(_tool(EDITOR, {"command": "create", "path": "features/a.txt", "file_text": "ok\n"}, "toolu_1")),
        _answer(_tool("report_feature", {"summary": "Made a.txt"}, "toolu_2")),
    ])
    events: list[AgentEvent] = []

    outcome = run_agent(_session(tmp_path, sdk, events), [], "Build feature a.", "feat-a")

    assert (outcome.stop, outcome.turns, outcome.tool_calls) == ("reported", 2, 2)
    assert outcome.report is not None and outcome.report.summary == "Made a.txt"
    assert (tmp_path / "features/a.txt").read_text() == "ok\n"
    sent_back = sdk.requests[1]["messages"][-1]["content"][0]
    assert sent_back["tool_use_id"] == "toolu_1" and not sent_back.get("is_error")
    assert [e.tool for e in events if isinstance(e, ToolCall)] == [EDITOR, "report_feature"]


def test_a_turn_ended_without_a_report_is_reminded_once_then_ends(tmp_path: Path) -> None:
    sdk = _Scripted([_answer(_text("All done."), stop="end_turn"), _answer(_text("Really done."), stop="end_turn")])

    outcome = run_agent(_session(tmp_path, sdk, []), [], "Build feature a.", "feat-a")

    assert (outcome.stop, outcome.turns, outcome.report) == ("end_turn", 2, None)
    reminder = sdk.requests[1]["messages"][-1]["content"][0]["text"]
    assert reminder == REPORT_REMINDER and outcome.final_text == "Really done."


def test_a_tool_that_fails_answers_with_an_error_and_the_loop_goes_on_to_its_turn_limit(tmp_path: Path) -> None:
    view = _tool(EDITOR, {"command": "view", "path": "no-such-file.txt"}, "toolu_1")
    sdk = _Scripted([_answer(view), _answer(view), _answer(view)])

    outcome = run_agent(_session(tmp_path, sdk, [], max_turns=2), [], "Build feature a.", "feat-a")

    assert (outcome.stop, outcome.turns, len(sdk.requests)) == ("max_turns", 2, 2)
    assert sdk.requests[1]["messages"][-1]["content"][0]["is_error"] is True
    assert outcome.tool_lines == [f"{EDITOR}: view no-such-file.txt (error)"] * 2


def test_an_answer_cut_off_at_max_tokens_ends_the_attempt_with_the_reason(tmp_path: Path) -> None:
    sdk = _Scripted([_answer(_text("I will now write"), stop="max_tokens")])

    outcome = run_agent(_session(tmp_path, sdk, []), [], "Build feature a.", "feat-a")

    assert (outcome.stop, outcome.turns, len(sdk.requests)) == ("max_tokens", 1, 1)
    assert outcome.error == "the model's answer was cut off at max_tokens: I will now write"


def test_a_tool_call_cut_off_at_max_tokens_is_not_run_and_the_model_is_told_to_send_it_shorter(tmp_path: Path) -> None:
    cut = _tool(EDITOR, {"command": "create", "path": "a.txt", "file_text": "half"}, "toolu_1")
    sdk = _Scripted([_answer(cut, stop="max_tokens"), _answer(_tool("report_feature", {"summary": "a"}, "toolu_2"))])

    outcome = run_agent(_session(tmp_path, sdk, []), [], "Build feature a.", "feat-a")

    assert (outcome.stop, outcome.turns) == ("reported", 2)
    assert not (tmp_path / "a.txt").exists()
    sent_back = sdk.requests[1]["messages"][-1]["content"][0]
    assert sent_back["tool_use_id"] == "toolu_1" and sent_back["is_error"] is True
    assert "cut off at max_tokens (1024 tokens)" in str(sent_back["content"])
