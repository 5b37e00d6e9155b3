"""Money is journaled call by call, and the agent loop's size estimate is kept, not redone.

The model client journals the worst case of each call before it is sent and the call's cost
when its answer arrives; loading the journal counts both, so a process killed at any instant
never leaves less recorded than the API billed. The agent loop keeps its requests' estimated
size as the conversation grows: one attempt measures its text about once, not once per turn.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anthropic
import httpx2
import pytest

import shared_base.tokens as tokens_module
from orchestrator.config import RunConfig
from orchestrator.llm.client import ModelClient
from orchestrator.llm.conversation import (
    AttemptRequestTokens,
    ObservationBook,
    cached_system,
    mask_old_observations,
    with_cached_tools,
    with_conversation_breakpoint,
)
from orchestrator.llm.costs.pricing import TokenUsage
from orchestrator.llm.costs.spend import RunTotals, Spend, SpendEntry
from orchestrator.llm.errors import ApiUnavailable
from orchestrator.llm.request_tokens import request_tokens
from orchestrator.run.attempt.agent_loop import AgentSession, run_agent
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.run_state import RunState
from orchestrator.store.state import StateStore
from orchestrator.tools.context import ToolContext
from orchestrator.tools.registry import tool_definitions
from tests.environments import unsandboxed
from tests.sdk_doubles import StreamsCreate

MODEL = "claude-sonnet-5-5"


def _message(blocks: list[Any], stop: str = "tool_use", output: int = 40) -> SimpleNamespace:
    usage = SimpleNamespace(input_tokens=300, output_tokens=output, cache_read_input_tokens=0,
                            cache_creation_input_tokens=0)
    return SimpleNamespace(content=blocks, usage=usage, stop_reason=stop)


class ScriptedSDK(StreamsCreate):
    """Answers `messages.create` from a list: a message, an exception to raise, or a callable."""

    def __init__(self, answers: list[Any]) -> None:
        self.answers = list(answers)
        self.requests: list[dict[str, Any]] = []
        self.messages = self

    def create(self, **request: Any) -> Any:
        self.requests.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer() if callable(answer) else answer


def _client(sdk: Any, journal: list[dict[str, Any]], **config: Any) -> ModelClient:
    spend = Spend(feature_id="feat-01")
    return ModelClient(
        RunConfig(retry_attempts=1, **config).client_settings(), sdk, spend, journal=lambda entry: journal.append(entry.dump())
    )


def _request() -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 1024, "messages": [{"role": "user", "content": "Build it."}]}


# ---- the client journals each call ----------------------------------------------------------


def test_each_call_is_journaled_before_it_is_sent_and_when_it_is_answered() -> None:
    journal: list[dict[str, Any]] = []
    seen_at_send: list[int] = []
    sdk = ScriptedSDK([lambda: seen_at_send.append(len(journal)) or _message([], "end_turn")])
    client = _client(sdk, journal)

    result = client.create(purpose="agent", **_request())

    assert seen_at_send == [1], "the worst case must be journaled before the request is sent"
    reserve, call = journal
    assert reserve["kind"] == "reserve" and reserve["feature"] == "feat-01"
    assert reserve["costUsd"] >= result.cost_usd > 0
    assert call == {"kind": "call", "purpose": "agent", "feature": "feat-01", "costUsd": result.cost_usd,
                    "usage": result.usage.dump(), "model": _request()["model"]}


def test_an_api_error_releases_the_reservation_and_an_interrupt_counts_the_worst_case() -> None:
    journal: list[dict[str, Any]] = []
    refused = anthropic.APIConnectionError(request=httpx2.Request("POST", "http://127.0.0.1/v1/messages"))
    client = _client(ScriptedSDK([refused, KeyboardInterrupt()]), journal)

    with pytest.raises(ApiUnavailable):
        client.create(purpose="agent", **_request())
    assert [entry["kind"] for entry in journal] == ["reserve", "release"]
    assert client.spend.run.cost_usd == 0

    with pytest.raises(KeyboardInterrupt):
        client.create(purpose="agent", **_request())
    worst = journal[2]["costUsd"]
    assert journal[3] == {"kind": "call", "purpose": "agent", "feature": "feat-01", "costUsd": worst,
                          "unconfirmed": True, "model": _request()["model"]}
    totals = client.spend.run.snapshot()
    assert totals.cost_usd == totals.unconfirmed_cost_usd == client.spend.feature_cost_usd == worst
    assert totals.unconfirmed_calls == 1  # the figure says how many calls it covers


# ---- loading the journal ---------------------------------------------------------------------


def _store(tmp_path: Path) -> StateStore:
    return StateStore(ProjectPaths.for_project(tmp_path))


def test_loading_counts_answered_calls_and_an_open_reservation_at_its_worst(tmp_path: Path) -> None:
    store = _store(tmp_path)
    state = RunState()
    state.feature("feat-01").status = "in_progress"
    store.save(state)
    store.record(state, "feat-01")
    usage = TokenUsage(input=100, output=20).dump()
    for spend in (
        {"kind": "reserve", "purpose": "agent", "feature": "feat-01", "costUsd": 0.5},
        {"kind": "call", "purpose": "agent", "feature": "feat-01", "costUsd": 0.01, "usage": usage},
        {"kind": "reserve", "purpose": "summarizer", "feature": None, "costUsd": 0.2},
        {"kind": "release", "purpose": "summarizer", "feature": None},
        {"kind": "reserve", "purpose": "summarizer", "feature": None, "costUsd": 0.1},
        {"kind": "call", "purpose": "summarizer", "feature": None, "costUsd": 0.002, "usage": usage},
        {"kind": "reserve", "purpose": "agent", "feature": "feat-01", "costUsd": 0.3},  # killed in flight
    ):
        store.record_spend(SpendEntry.model_validate(spend))

    loaded = _store(tmp_path).load()

    assert loaded is not None
    totals = loaded.totals
    assert totals.cost_usd == pytest.approx(0.01 + 0.002 + 0.3)
    assert totals.unconfirmed_cost_usd == pytest.approx(0.3)
    assert totals.unconfirmed_calls == 1
    assert totals.api_calls == 2
    assert totals.tokens.input == 200 and totals.summarizer_cost_usd == pytest.approx(0.002)
    entry = loaded.features["feat-01"]
    assert entry.cost_usd == pytest.approx(0.31) and entry.tokens.output == 20


def test_a_feature_record_after_spend_lines_holds_them_and_is_not_counted_twice(tmp_path: Path) -> None:
    store = _store(tmp_path)
    state = RunState()
    store.save(state)
    store.record_spend(SpendEntry(kind="reserve", purpose="agent", feature="feat-01", cost_usd=0.5))
    store.record_spend(SpendEntry(kind="call", purpose="agent", feature="feat-01", cost_usd=0.01,
                                  usage=TokenUsage(input=10)))
    entry = state.feature("feat-01")  # the runner books what was spent into each record
    entry.cost_usd = 0.01
    state.totals = RunTotals(cost_usd=0.01)
    store.record(state, "feat-01")

    loaded = _store(tmp_path).load()

    assert loaded is not None and loaded.totals.cost_usd == pytest.approx(0.01)
    assert loaded.features["feat-01"].cost_usd == pytest.approx(0.01)


@pytest.mark.parametrize("line", [
    {"spend": {"kind": "call", "purpose": "agent", "feature": "../x", "costUsd": 1.0, "usage": {}}},
    {"spend": {"kind": "call", "purpose": "agent", "feature": None, "costUsd": -5, "usage": {}}},
    {"spend": {"kind": "call", "purpose": "agent", "feature": None, "costUsd": "NaN"}},
    {"spend": {"kind": "refund", "costUsd": 1.0}},
    {"feature": "feat-01", "state": {"checkFiles": {"commandSha": "x", "files": ["../../etc/passwd"]}},
     "summarization": {}, "totals": {}, "iteration": 0},
])
def test_a_damaged_journal_line_is_skipped_and_reported(tmp_path: Path, line: dict[str, Any]) -> None:
    warnings: list[str] = []
    paths = ProjectPaths.for_project(tmp_path)
    store = StateStore(paths, on_warning=warnings.append)
    store.save(RunState())
    paths.state_journal.write_text(json.dumps(line) + "\n")

    loaded = StateStore(paths, on_warning=warnings.append).load()

    assert loaded is not None and loaded.totals.cost_usd == 0 and "feat-01" not in loaded.features
    assert any("unreadable line" in w for w in warnings)


# ---- the agent loop keeps its size estimate ----------------------------------------------------


def _conversation_step(messages: list[dict[str, Any]], index: int, names: dict[str, str]) -> None:
    messages.append({"role": "assistant", "content": [
        {"type": "text", "text": f"Step {index}: run it  again"},
        {"type": "tool_use", "id": f"toolu_{index}", "name": "bash", "input": {"command": f"make  test-{index}"}},
    ]})
    names[f"toolu_{index}"] = "bash"
    error = {"is_error": True} if index % 4 == 0 else {}
    messages.append({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": f"toolu_{index}", "content": "out put 123\n  " * (40 + 9 * index), **error},
    ]})


def test_the_kept_size_equals_measuring_the_whole_request_every_time() -> None:
    system, tools = cached_system("You build software.  " * 40), with_cached_tools(tool_definitions())
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": "## Feature\nID: x"}]}]
    size, book = AttemptRequestTokens(system, tools), ObservationBook()
    for index in range(40):
        _conversation_step(messages, index, book.tool_names)
        rewritten: set[int] = set()
        masked = mask_old_observations(messages, 2500, book, rewritten)
        request = {"model": MODEL, "max_tokens": 10, "system": system, "tools": tools,
                   "messages": with_conversation_breakpoint(messages)}
        assert size.tokens(messages, rewritten) == request_tokens(request), (index, masked)
    assert book.masked


def test_an_attempt_measures_its_text_about_once_not_once_per_turn(tmp_path: Path, monkeypatch) -> None:
    """Issue 13, item 20: `affordable_max_tokens` re-estimated the whole request on every call."""
    turns = 50
    (tmp_path / "big.txt").write_text("a line of the file the agent keeps reading\n" * 60)
    answers: list[Any] = [
        _message([SimpleNamespace(type="tool_use", id=f"toolu_{i}", name="str_replace_based_edit_tool",
                                  input={"command": "view", "path": "big.txt"})])
        for i in range(turns - 1)
    ] + [_message([SimpleNamespace(type="text", text="done")], "end_turn")]
    sdk = ScriptedSDK(answers)
    session = AgentSession(
        client=ModelClient(RunConfig(max_cost=100.0).client_settings(), sdk, Spend()), model=MODEL, system="You build software.",
        tool_context=ToolContext(environment=unsandboxed(tmp_path)), max_turns=turns, max_output_tokens=1024,
        mask_after_tokens=1_000_000,  # no masking: the whole conversation stays in every request
    )
    measured = 0
    real_pieces = tokens_module._pieces

    def counting_pieces(text: str) -> int:
        nonlocal measured
        measured += len(text)
        return real_pieces(text)

    monkeypatch.setattr(tokens_module, "_pieces", counting_pieces)
    tokens_module._cached_pieces.cache_clear()

    outcome = run_agent(session, [], "## Feature\nID: feat-01\nRead big.txt.", "feat-01")

    assert outcome.turns == turns
    last_request = len(json.dumps({k: sdk.requests[-1].get(k) for k in ("system", "tools", "messages")}))
    print(f"\n{turns} turns: {measured:,} characters estimated for a last request of {last_request:,}")
    assert measured < 3 * last_request, "the request size is measured again from scratch on every call"
