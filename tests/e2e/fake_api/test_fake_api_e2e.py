"""The fake Messages API behaves like the real one, as the real `anthropic` SDK sees it.

Every test talks to the fake over HTTP with the SDK (or, where the SDK would refuse to send
a broken request, with urllib), so what passes here is what the orchestrator will meet.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import pydantic
import pytest

from fake_messages_api.billing.prompt import PromptBlock
from fake_messages_api.faults import FailFirst, Fault
from fake_messages_api.scripted_agent.agent_turn import AgentTurn
from fake_messages_api.scripted_agent.plans import bash, edit_create, load_plans, report, text
from fake_messages_api.scripted_agent.summarizer import empty_summarizer
from fake_messages_api.server import FakeAPI
from tests.fake_api_fixtures import running_fake_api

MODEL = "claude-sonnet-5"
REPO_ROOT = Path(__file__).resolve().parents[3]
TOOLS: list[dict[str, Any]] = [
    {"type": "bash_20250124", "name": "bash"},
    {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"},
    {
        "name": "report_feature",
        "description": "Report what was done.",
        "input_schema": {
            "type": "object",
            "properties": {
                "summary": {"type": "string"},
                "decisions": {"type": "array", "items": {"type": "string"}},
                "constraints": {"type": "array", "items": {"type": "string"}},
                "notes": {"type": "string"},
            },
            "required": ["summary"],
        },
    },
]
# Long enough (well over the 1024-token minimum) that the system prompt alone is cacheable.
SYSTEM_TEXT = "You are a careful coding agent working inside one project directory. " * 120


def feature_request(feature_id: str, verification: dict[str, Any] | None = None) -> str:
    """A first user message in the orchestrator's format."""
    parts = []
    if verification is not None:
        parts.append("## Last Verification Result\n\n" + json.dumps(verification))
    parts.append(f"## Feature\n\nID: {feature_id}\nName: {feature_id} name\nCategory: backend\n")
    return "\n\n".join(parts)


@pytest.fixture
def fake() -> Iterator[FakeAPI]:
    with running_fake_api() as server:
        yield server


def sdk(fake: FakeAPI, **options: Any) -> anthropic.Anthropic:
    options.setdefault("max_retries", 0)
    return anthropic.Anthropic(base_url=fake.base_url, api_key="test-key", **options)


def post_raw(
    fake: FakeAPI, body: Any, *, path: str = "/v1/messages", headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], dict[str, Any]]:
    """POST without the SDK, for requests the SDK would not send. Returns status, headers, JSON."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    all_headers = {"content-type": "application/json", "anthropic-version": "2023-06-01", "x-api-key": "k"}
    all_headers.update(headers or {})
    request = urllib.request.Request(fake.base_url + path, data=data, headers=all_headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read())


def tool_results_for(message: Any, *, cache: bool = False) -> dict[str, Any]:
    """The user message answering every tool_use in `message` with a short output."""
    blocks: list[dict[str, Any]] = [
        {"type": "tool_result", "tool_use_id": b.id, "content": f"ran {b.name} ok"}
        for b in message.content
        if b.type == "tool_use"
    ]
    if cache:
        blocks[-1]["cache_control"] = {"type": "ephemeral"}
    return {"role": "user", "content": blocks}


# -- the scripted agent ---------------------------------------------------------------------


def test_tool_use_round_trip(fake: FakeAPI) -> None:
    client = sdk(fake)
    messages: list[Any] = [{"role": "user", "content": feature_request("todo-model")}]
    first = client.messages.create(model=MODEL, max_tokens=1024, messages=messages, tools=TOOLS)

    assert first.stop_reason == "tool_use"
    assert first.model == MODEL and first.id.startswith("msg_")
    (call,) = [b for b in first.content if b.type == "tool_use"]
    assert call.id.startswith("toolu_")
    assert call.name == "str_replace_based_edit_tool"
    assert call.input == {"command": "create", "path": "features/todo-model.txt", "file_text": "done\n"}

    messages += [{"role": "assistant", "content": first.content}, tool_results_for(first)]
    second = client.messages.create(model=MODEL, max_tokens=1024, messages=messages, tools=TOOLS)
    assert [b.input for b in second.content if b.type == "tool_use"] == [
        {"command": "cat features/todo-model.txt"}
    ]
    recorded = fake.agent_requests("todo-model")
    assert [r.step for r in recorded] == [0, 1]
    assert recorded[1].body["messages"][2]["content"][0]["tool_use_id"] == call.id
    assert recorded[0].headers["authorization"] == "Bearer test-key"


def test_default_plan_creates_checks_reports_then_ends(fake: FakeAPI) -> None:
    client = sdk(fake)
    messages: list[Any] = [{"role": "user", "content": feature_request("auth")}]
    replies = []
    for _ in range(4):
        reply = client.messages.create(model=MODEL, max_tokens=1024, messages=messages, tools=TOOLS)
        replies.append(reply)
        if reply.stop_reason != "tool_use":
            break
        messages += [{"role": "assistant", "content": reply.content}, tool_results_for(reply)]

    calls = [[(b.name, b.input) for b in r.content if b.type == "tool_use"] for r in replies]
    assert calls[0] == [
        ("str_replace_based_edit_tool", {"command": "create", "path": "features/auth.txt", "file_text": "done\n"})
    ]
    assert calls[1] == [("bash", {"command": "cat features/auth.txt"})]
    assert calls[2] == [
        (
            "report_feature",
            {
                "summary": "Implemented auth",
                "decisions": ["auth: chose approach A"],
                "constraints": ["auth: keep the public API stable"],
                "notes": "",
            },
        )
    ]
    assert replies[3].stop_reason == "end_turn"
    assert [b.text for b in replies[3].content] == ["Feature auth is done."]
    assert fake.feature_calls == {"auth": 4}


def test_plans_see_tool_results_and_the_last_verification(fake: FakeAPI) -> None:
    seen: list[AgentTurn] = []

    def plan(turn: AgentTurn) -> list[dict[str, Any]]:
        seen.append(turn)
        if turn.step == 0:
            return [bash("pytest -q")]
        return [text("retry" if turn.is_retry else "first try")]

    fake.plans["calc"] = plan
    client = sdk(fake)
    verification = {"command": "pytest -q", "success": False, "exitCode": 1, "output": "E assert 2 == 3"}
    messages: list[Any] = [{"role": "user", "content": feature_request("calc", verification)}]
    first = client.messages.create(model=MODEL, max_tokens=1024, messages=messages, tools=TOOLS)
    messages += [
        {"role": "assistant", "content": first.content},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": first.content[0].id,
             "content": [{"type": "text", "text": "1 failed"}], "is_error": True},
        ]},
    ]
    second = client.messages.create(model=MODEL, max_tokens=1024, messages=messages, tools=TOOLS)

    assert second.content[0].text == "retry"
    assert seen[0].last_verification == verification
    assert [(r.content, r.is_error) for r in seen[1].tool_results] == [("1 failed", True)]


def test_static_plan_steps_get_fresh_tool_ids_each_time(fake: FakeAPI) -> None:
    fake.plans["x"] = [[edit_create("a.py", "A = 1\n")], [report("did x")]]
    client = sdk(fake)
    request = [{"role": "user", "content": feature_request("x")}]
    ids = {client.messages.create(model=MODEL, max_tokens=512, messages=request, tools=TOOLS).content[0].id
           for _ in range(3)}
    assert len(ids) == 3


def test_replayed_history_is_skipped_and_steps_count_from_the_current_request(fake: FakeAPI) -> None:
    history = "WM_KIND=text_input\nts_ms: 1\nWM_JSON: " + json.dumps({"text": feature_request("old")})
    messages = [
        {"role": "user", "content": history},
        {"role": "assistant", "content": "WM_KIND=text_output\nts_ms: 2\nWM_JSON: {}"},
        {"role": "user", "content": "CURRENT_FEATURE_REQUEST\n" + feature_request("new")},
    ]
    reply = sdk(fake).messages.create(model=MODEL, max_tokens=512, messages=messages, tools=TOOLS)
    assert reply.content[1].input["path"] == "features/new.txt"  # step 0 of "new"
    assert fake.feature_calls == {"new": 1}


def test_json_plans_with_a_wildcard_default(tmp_path: Path) -> None:
    path = tmp_path / "plans.json"
    path.write_text(json.dumps({
        "*": [[{"type": "tool_use", "name": "bash", "input": {"command": "echo {feature_id}"}}]],
        "special": [[{"type": "text", "text": "special {feature_id}"}]],
    }))
    plans, default = load_plans(path)
    assert default is not None
    with running_fake_api(plans=plans, default_plan=default) as fake:
        client = sdk(fake)
        generic = client.messages.create(model=MODEL, max_tokens=256, tools=TOOLS,
                                         messages=[{"role": "user", "content": feature_request("f1")}])
        special = client.messages.create(model=MODEL, max_tokens=256, tools=TOOLS,
                                         messages=[{"role": "user", "content": feature_request("special")}])
    assert generic.content[0].input == {"command": "echo f1"}
    assert generic.content[0].id.startswith("toolu_")
    assert special.content[0].text == "special special" and special.stop_reason == "end_turn"


def test_max_tokens_cuts_the_reply(fake: FakeAPI) -> None:
    fake.plans["long"] = [[text("word " * 500)]]
    reply = sdk(fake).messages.create(model=MODEL, max_tokens=20, tools=TOOLS,
                                      messages=[{"role": "user", "content": feature_request("long")}])
    assert reply.stop_reason == "max_tokens"
    assert reply.usage.output_tokens == 20
    assert 0 < len(reply.content[0].text) < len("word " * 500)


def test_streaming_gives_the_same_message(fake: FakeAPI) -> None:
    client = sdk(fake)
    with client.messages.stream(model=MODEL, max_tokens=1024, tools=TOOLS,
                                messages=[{"role": "user", "content": feature_request("s")}]) as stream:
        message = stream.get_final_message()
    assert message.stop_reason == "tool_use"
    assert message.content[1].input["path"] == "features/s.txt"
    assert message.usage.input_tokens > 0


# -- the summarizer -------------------------------------------------------------------------


class Decision(pydantic.BaseModel):
    featureId: str
    description: str


class Summary(pydantic.BaseModel):
    summary: str
    decisions: list[Decision]
    retired: list[str] = []
    budget: int | None = None


def test_structured_output_goes_to_the_summarizer_and_is_billed_apart(fake: FakeAPI) -> None:
    client = sdk(fake)
    default = client.messages.parse(model="claude-haiku-5-5", max_tokens=512, output_format=Summary,
                                    messages=[{"role": "user", "content": "Summarize."}])
    # The smallest valid answer, with a summary a model could have written (the request names no feature).
    assert default.parsed_output == Summary(summary="0 feature(s) summarized so far.", decisions=[], retired=[], budget=0)
    fake.summarizer = empty_summarizer
    empty = client.messages.parse(model="claude-haiku-5-5", max_tokens=512, output_format=Summary,
                                  messages=[{"role": "user", "content": "Summarize."}])
    assert empty.parsed_output == Summary(summary="", decisions=[], retired=[], budget=0)

    fake.summarizer = lambda request: {"summary": "all good", "decisions": [{"featureId": "a", "description": "d"}]}
    custom = client.messages.parse(model="claude-haiku-5-5", max_tokens=512, output_format=Summary,
                                   messages=[{"role": "user", "content": feature_request("a")}])
    assert custom.parsed_output is not None and custom.parsed_output.summary == "all good"
    sdk(fake).messages.create(model=MODEL, max_tokens=512, tools=TOOLS,
                              messages=[{"role": "user", "content": feature_request("a")}])

    usage = fake.usage
    assert usage.summarizer.calls == 3 and usage.agent.calls == 1
    assert fake.summarizer_calls == 3
    assert fake.feature_calls == {"a": 1}  # a summarizer request is not the agent's
    assert usage.total.total == usage.agent.total + usage.summarizer.total > 0


# -- usage and prompt caching ---------------------------------------------------------------


def cached_system() -> list[dict[str, Any]]:
    return [{"type": "text", "text": SYSTEM_TEXT, "cache_control": {"type": "ephemeral"}}]


def test_usage_reports_cache_writes_then_reads(fake: FakeAPI) -> None:
    client = sdk(fake)
    request = dict(model=MODEL, max_tokens=512, system=cached_system(), tools=TOOLS,
                   messages=[{"role": "user", "content": feature_request("u")}])
    first = client.messages.create(**request).usage
    second = client.messages.create(**request).usage

    assert first.cache_read_input_tokens == 0
    assert first.cache_creation_input_tokens > 1024
    assert first.cache_creation is not None
    assert first.cache_creation.ephemeral_5m_input_tokens == first.cache_creation_input_tokens
    assert first.input_tokens > 0  # the user message, after the breakpoint
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens
    assert second.cache_creation_input_tokens == 0
    assert second.input_tokens == first.input_tokens
    counted = client.messages.count_tokens(model=MODEL, system=cached_system(), tools=TOOLS,
                                           messages=request["messages"])
    assert counted.input_tokens == first.input_tokens + first.cache_creation_input_tokens


def test_ten_turn_conversation_is_mostly_cache_reads(fake: FakeAPI) -> None:
    fake.plans["loop"] = lambda turn: [bash(f"echo step {turn.step}")] if turn.step < 10 else [text("done")]
    client = sdk(fake)
    tools = [*TOOLS[:-1], {**TOOLS[-1], "cache_control": {"type": "ephemeral"}}]
    messages: list[Any] = [{"role": "user", "content": [
        {"type": "text", "text": feature_request("loop"), "cache_control": {"type": "ephemeral"}}]}]
    usages = []
    for _ in range(10):
        reply = client.messages.create(model=MODEL, max_tokens=1024, system=cached_system(),
                                       tools=tools, messages=messages)
        usages.append(reply.usage)
        # The breakpoint moves to the newest user message, as the orchestrator does.
        for message in messages:
            if message["role"] == "user":
                for block in message["content"]:
                    block.pop("cache_control", None)
        messages += [{"role": "assistant", "content": reply.content}, tool_results_for(reply, cache=True)]

    reads = sum(u.cache_read_input_tokens for u in usages)
    prompt = sum(u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens for u in usages)
    assert usages[0].cache_read_input_tokens == 0
    for before, after in itertools.pairwise(usages):
        # Each turn reads everything the previous one cached.
        assert after.cache_read_input_tokens == before.cache_read_input_tokens + before.cache_creation_input_tokens
    assert all(u.input_tokens == 0 for u in usages)  # the last block is a breakpoint
    assert reads / prompt > 0.8


def blocks(*tokens: int, breakpoints: tuple[int, ...] = (), ttl: str = "5m", tag: str = "") -> list[PromptBlock]:
    return [PromptBlock("messages", f"{tag}{i}", n, ttl if i in breakpoints else None) for i, n in enumerate(tokens)]


# -- faults ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "error_class", "error_type"),
    [
        (429, anthropic.RateLimitError, "rate_limit_error"),
        (529, anthropic.OverloadedError, "overloaded_error"),
        (500, anthropic.InternalServerError, "api_error"),
    ],
)
def test_retryable_errors_are_retried_then_raised(
    fake: FakeAPI, status: int, error_class: type[anthropic.APIStatusError], error_type: str
) -> None:
    fake.faults = lambda index, request: Fault.http(status)
    started = time.monotonic()
    with pytest.raises(error_class) as raised:
        sdk(fake, max_retries=2).messages.create(model=MODEL, max_tokens=64,
                                                 messages=[{"role": "user", "content": "hi"}])
    assert fake.calls == 3  # the first try and two retries
    assert raised.value.status_code == status and raised.value.type == error_type
    assert raised.value.request_id is not None and raised.value.request_id.startswith("req_")
    assert time.monotonic() - started < 1.0  # the SDK waited 0.01 s, not its own 1.1 s+ backoff


def test_fail_first_is_absorbed_by_the_sdk_retries(fake: FakeAPI) -> None:
    fake.faults = FailFirst(2, 529)
    reply = sdk(fake, max_retries=2).messages.create(model=MODEL, max_tokens=64,
                                                     messages=[{"role": "user", "content": "hi"}])
    assert reply.type == "message"
    assert [r.outcome for r in fake.requests] == ["fault:529", "fault:529", "ok"]
    assert fake.usage.agent.calls == 1  # failed calls are not billed


def test_dropped_connection_raises_connection_error(fake: FakeAPI) -> None:
    fake.faults = lambda index, request: Fault.drop()
    with pytest.raises(anthropic.APIConnectionError) as raised:
        sdk(fake, max_retries=1).messages.create(model=MODEL, max_tokens=64,
                                                 messages=[{"role": "user", "content": "hi"}])
    assert not isinstance(raised.value, anthropic.APITimeoutError)
    assert fake.calls == 2
    assert all(r.status is None and r.outcome == "fault:drop" for r in fake.requests)


def test_slow_reply_raises_timeout_and_stop_does_not_wait_for_it(fake: FakeAPI) -> None:
    fake.faults = lambda index, request: Fault.slow(30)
    started = time.monotonic()
    with pytest.raises(anthropic.APITimeoutError):
        sdk(fake, max_retries=0, timeout=0.3).messages.create(model=MODEL, max_tokens=64,
                                                              messages=[{"role": "user", "content": "hi"}])
    assert time.monotonic() - started < 2
    stopping = time.monotonic()
    fake.stop()
    assert time.monotonic() - stopping < 2


def test_slow_reply_within_the_timeout_is_answered(fake: FakeAPI) -> None:
    fake.faults = lambda index, request: Fault.slow(0.3)
    started = time.monotonic()
    reply = sdk(fake, timeout=5).messages.create(model=MODEL, max_tokens=64,
                                                 messages=[{"role": "user", "content": "hi"}])
    assert reply.type == "message" and time.monotonic() - started >= 0.3


def test_malformed_bodies_reach_the_client(fake: FakeAPI) -> None:
    client = sdk(fake)
    fake.faults = lambda index, request: Fault.not_json()
    # This SDK does not wrap a non-JSON 200: the orchestrator must expect a ValueError.
    with pytest.raises(json.JSONDecodeError):
        client.messages.create(model=MODEL, max_tokens=64, messages=[{"role": "user", "content": "hi"}])
    fake.faults = lambda index, request: Fault.no_content()
    reply = client.messages.create(model=MODEL, max_tokens=64, messages=[{"role": "user", "content": "hi"}])
    assert reply.content is None


@pytest.mark.parametrize("mode", ["drop", "503"])
def test_a_server_that_is_down_refuses_every_call_until_up(fake: FakeAPI, mode: str) -> None:
    fake.down(mode)  # type: ignore[arg-type]
    expected = anthropic.APIConnectionError if mode == "drop" else anthropic.InternalServerError
    client = sdk(fake, max_retries=1)
    with pytest.raises(expected):
        client.messages.create(model=MODEL, max_tokens=64, messages=[{"role": "user", "content": "hi"}])
    fake.up()
    assert client.messages.create(model=MODEL, max_tokens=64,
                                  messages=[{"role": "user", "content": "hi"}]).type == "message"
    assert [r.outcome for r in fake.requests] == ["down", "down", "ok"]


def test_a_plan_that_raises_is_a_500_that_is_not_retried(fake: FakeAPI) -> None:
    def broken(turn: AgentTurn) -> list[dict[str, Any]]:
        raise RuntimeError("plan bug")

    fake.plans["b"] = broken
    with pytest.raises(anthropic.InternalServerError, match="plan bug"):
        sdk(fake, max_retries=2).messages.create(model=MODEL, max_tokens=64, tools=TOOLS,
                                                 messages=[{"role": "user", "content": feature_request("b")}])
    assert fake.calls == 1
    assert [type(e) for e in fake.errors] == [RuntimeError]
    fake.reset()  # so the fixture does not fail the test for the planted error


# -- authentication, validation, routing ----------------------------------------------------


def test_authentication_and_permission_errors(fake: FakeAPI) -> None:
    fake.forbidden_keys.add("sk-ant-readonly")
    hi = [{"role": "user", "content": "hi"}]
    with pytest.raises(anthropic.AuthenticationError) as bad:
        anthropic.Anthropic(base_url=fake.base_url, api_key="sk-ant-bad", max_retries=2).messages.create(
            model=MODEL, max_tokens=64, messages=hi)
    assert bad.value.type == "authentication_error"
    with pytest.raises(anthropic.PermissionDeniedError):
        anthropic.Anthropic(base_url=fake.base_url, api_key="sk-ant-readonly").messages.create(
            model=MODEL, max_tokens=64, messages=hi)
    assert fake.calls == 2  # neither is retried

    status, _headers, body = post_raw(fake, {"model": MODEL, "max_tokens": 5, "messages": hi},
                                     headers={"x-api-key": ""})
    assert status == 401 and body["error"]["type"] == "authentication_error"
    status, _, _ = post_raw(fake, {"model": MODEL, "max_tokens": 5, "messages": hi},
                            headers={"x-api-key": "any-key"})
    assert status == 200


def test_error_shape_and_unknown_paths(fake: FakeAPI) -> None:
    status, headers, body = post_raw(fake, {}, path="/v1/complete")
    assert status == 404
    assert body["type"] == "error" and body["error"]["type"] == "not_found_error"
    assert body["request_id"].startswith("req_") and headers["request-id"] == body["request_id"]
    assert set(body) == {"type", "error", "request_id"} and set(body["error"]) == {"type", "message"}


TOOL_USE = {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls"}}
TOOL_RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.py"}
USER = {"role": "user", "content": "hi"}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"model": None}, "model: Field required"),
        ({"max_tokens": None}, "max_tokens: Field required"),
        ({"max_tokens": 0}, "greater than or equal to 1"),
        ({"max_tokens": "10"}, "max_tokens: Input should be a valid integer"),
        ({"messages": []}, "at least one message"),
        ({"messages": [{"role": "system", "content": "x"}]}, "messages.0.role"),
        ({"messages": [{"role": "assistant", "content": "x"}]}, 'first message must use the "user" role'),
        ({"messages": [{"role": "user", "content": []}]}, "non-empty content"),
        ({"messages": [USER, {"role": "assistant", "content": [TOOL_USE]}, {"role": "user", "content": "ok"}]},
         "`tool_use` ids were found without `tool_result` blocks immediately after: toolu_1"),
        ({"messages": [USER, {"role": "assistant", "content": "sure"}, {"role": "user", "content": [TOOL_RESULT]}]},
         "unexpected `tool_use_id` found in `tool_result` blocks: toolu_1"),
        ({"messages": [USER, {"role": "assistant", "content": [TOOL_USE]},
                       {"role": "user", "content": [{"type": "text", "text": "x"}, TOOL_RESULT]}]},
         "must come first"),
        ({"tools": [{"name": "report_feature"}]}, "tools.0.custom.input_schema: Field required"),
        ({"tools": [{"type": "bash_20250124", "name": "shell"}]}, "tools.0.bash_20250124.name: Input should be 'bash'"),
        ({"tools": [{"type": "text_editor_20250728", "name": "str_replace_editor"}]},
         "Input should be 'str_replace_based_edit_tool'"),
        ({"tools": [{"type": "bash_29990101", "name": "bash"}]}, "does not match any of the expected tags"),
        ({"tools": [*TOOLS, TOOLS[0]]}, "Tool names must be unique"),
        ({"tools": None, "messages": [USER, {"role": "assistant", "content": [TOOL_USE]},
                                      {"role": "user", "content": [TOOL_RESULT]}]},
         "must define tools"),
        ({"system": [{"type": "text", "text": f"s{i}", "cache_control": {"type": "ephemeral"}} for i in range(5)]},
         "A maximum of 4 blocks with cache_control may be provided. Found 5."),
        ({"temperature_typo": 1}, "temperature_typo: Extra inputs are not permitted"),
        ({"output_config": {"format": {"type": "json_schema"}}}, "output_config.format.schema"),
    ],
)
def test_invalid_requests_get_the_apis_400(fake: FakeAPI, change: dict[str, Any], message: str) -> None:
    body: dict[str, Any] = {"model": MODEL, "max_tokens": 64, "tools": TOOLS, "messages": [USER]}
    for key, value in change.items():
        if value is None:
            body.pop(key)
        else:
            body[key] = value
    status, _, reply = post_raw(fake, body)
    assert status == 400, reply
    assert reply["error"]["type"] == "invalid_request_error"
    assert message in reply["error"]["message"]
    (recorded,) = fake.requests
    assert recorded.body == body and recorded.outcome == "error:invalid_request_error"


def test_a_valid_tool_conversation_passes_validation(fake: FakeAPI) -> None:
    body = {"model": MODEL, "max_tokens": 64, "tools": TOOLS, "messages": [
        USER, {"role": "assistant", "content": [{"type": "text", "text": "let me look"}, TOOL_USE]},
        {"role": "user", "content": [TOOL_RESULT, {"type": "text", "text": "go on"}]}]}
    status, _, reply = post_raw(fake, body)
    assert status == 200, reply


def test_protocol_errors(fake: FakeAPI) -> None:
    status, _, reply = post_raw(fake, b"{not json")
    assert status == 400 and "valid JSON" in reply["error"]["message"]
    status, _, reply = post_raw(fake, {"model": MODEL, "max_tokens": 5, "messages": [USER]},
                                headers={"anthropic-version": ""})
    assert status == 400 and "anthropic-version" in reply["error"]["message"]


def test_count_tokens_needs_no_max_tokens_and_validates(fake: FakeAPI) -> None:
    client = sdk(fake)
    small = client.messages.count_tokens(model=MODEL, messages=[USER])
    large = client.messages.count_tokens(model=MODEL, messages=[USER], tools=TOOLS, system=SYSTEM_TEXT)
    assert 0 < small.input_tokens < large.input_tokens
    with pytest.raises(anthropic.BadRequestError):
        client.messages.count_tokens(model=MODEL, messages=[])
    assert [r.kind for r in fake.requests] == ["count_tokens"] * 3
    assert fake.usage.total.calls == 0  # counting is free


# -- the server itself ----------------------------------------------------------------------


def test_concurrent_calls_are_all_answered_and_recorded(fake: FakeAPI) -> None:
    client = sdk(fake)
    errors: list[BaseException] = []

    def call(i: int) -> None:
        try:
            client.messages.create(model=MODEL, max_tokens=256, tools=TOOLS,
                                   messages=[{"role": "user", "content": feature_request(f"f{i % 4}")}])
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=call, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert fake.calls == 16 and sorted(r.index for r in fake.requests) == list(range(16))
    assert fake.feature_calls == {"f0": 4, "f1": 4, "f2": 4, "f3": 4}
    fake.reset()
    assert (fake.calls, fake.feature_calls, fake.usage.total.total) == (0, {}, 0)


def test_standalone_mode_prints_its_url_and_serves(tmp_path: Path) -> None:
    plans = tmp_path / "plans.json"
    plans.write_text(json.dumps({"*": [[{"type": "text", "text": "hello from {feature_id}"}]]}))
    process = subprocess.Popen(
        [sys.executable, "-m", "fake_messages_api", "--port", "0", "--plans", str(plans)],
        cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:")
        client = anthropic.Anthropic(base_url=base_url, api_key="k", max_retries=0)
        reply = client.messages.create(model=MODEL, max_tokens=64,
                                       messages=[{"role": "user", "content": feature_request("demo")}])
        assert reply.content[0].text == "hello from demo"
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=10)
    assert process.returncode == 0
    assert "after 1 calls" in stderr


def test_keep_requests_bounds_memory_but_not_the_counters() -> None:
    with running_fake_api(keep_requests=2) as fake:
        client = sdk(fake)
        for _i in range(5):
            client.messages.create(model=MODEL, max_tokens=256, tools=TOOLS,
                                   messages=[{"role": "user", "content": feature_request("k")}])
        assert fake.calls == 5 and fake.feature_calls == {"k": 5} and fake.usage.agent.calls == 5
        assert [r.index for r in fake.requests] == [3, 4]
