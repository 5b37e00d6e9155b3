"""`--thinking`: thinking blocks go back unchanged within a feature's attempt, never beyond it,
and a model that cannot think as asked is refused before any call."""

from __future__ import annotations

import pytest

from fake_messages_api.scripted_agent.plans import bash, edit_create, report, text
from orchestrator.config import RunConfig
from orchestrator.llm.attempt_model import ANSWER_HEADROOM, attempt_model, fit_thinking_budget
from orchestrator.llm.models import INTERLEAVED_THINKING_BETA
from tests.cli_helpers import plain_summarizer, read_json, run_cli, write_spec

THINKING_TYPES = ("thinking", "redacted_thinking")


def _long_plan(turn):
    """Four tool turns, so thinking blocks (plain and redacted) must survive several round trips."""
    fid = turn.feature_id
    steps = [[bash("ls")], [edit_create(f"features/{fid}.txt", "ok\n")], [bash("cat features/*.txt")],
             [report(f"Implemented {fid}")], [text("done")]]
    return steps[min(turn.step, len(steps) - 1)]


def _thinking_in(value: object) -> list[dict]:
    """Every thinking or redacted_thinking block anywhere in a request's messages."""
    found = []
    if isinstance(value, dict):
        if value.get("type") in THINKING_TYPES:
            found.append(value)
        for item in value.values():
            found += _thinking_in(item)
    elif isinstance(value, list):
        for item in value:
            found += _thinking_in(item)
    return found


@pytest.mark.parametrize("context", ["compressed", "replay"])
def test_thinking_blocks_go_back_unchanged_and_never_reach_the_next_feature(fake_api, project, context):
    fake_api.default_plan = _long_plan
    fake_api.summarizer = plain_summarizer
    spec = write_spec(project, 2)

    result = run_cli(
        ["run", str(spec), "--model", "claude-sonnet-4-5", "--thinking", "2048", "--context", context,
         "--summarize-every", "1", "--json"], project, fake_api,
    )

    assert result.code == 0, result.stderr
    first = fake_api.agent_requests("feat-01")
    assert len(first) == 4  # the report ends the attempt
    for request in first:
        assert request.body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
        assert INTERLEAVED_THINKING_BETA in request.headers["anthropic-beta"]
    # Each request carries every earlier answer of the attempt exactly as the API sent it.
    for later, earlier in zip(first[1:], first, strict=False):
        sent_back = [m for m in later.body["messages"] if m["role"] == "assistant"][-1]["content"]
        assert sent_back == earlier.response["content"]
    returned = [b for r in first for b in r.response["content"] if b["type"] in THINKING_TYPES]
    assert {b["type"] for b in returned} == set(THINKING_TYPES)
    # Nothing of it anywhere else: not in the next feature's requests, not in the summarizer's.
    texts = [b.get("thinking") or b.get("data") for b in returned]
    second = fake_api.agent_requests("feat-02")
    own = [b for r in second for b in r.response["content"] if b["type"] in THINKING_TYPES]
    assert second and own
    for request in second:
        assert all(block in own for block in _thinking_in(request.body["messages"]))
        assert not any(t in request.raw.decode() for t in texts)
    summaries = [r for r in fake_api.requests if r.kind == "summarizer"]
    assert summaries or context == "replay"  # replay folds memory without the summarizer model
    for request in summaries:
        assert not _thinking_in(request.body.get("messages")) and "thinking" not in request.body
        assert not any(t in request.raw.decode() for t in texts)
    # Thinking tokens are output tokens: counted and priced as such.
    events = [e for e in result.events() if e["type"] == "api_call" and e["feature"] == "feat-01"]
    assert sum(e["usage"]["output"] for e in events) == sum(r.response["usage"]["output_tokens"] for r in first)
    log = read_json(project / ".autonomous/logs/feat-01.json")
    assert log["tokens"]["output"] >= sum(r.response["usage"]["output_tokens"] for r in first)


def test_auto_thinking_is_adaptive_on_a_model_that_decides_itself(fake_api, project):
    spec = write_spec(project, 1)

    result = run_cli(["run", str(spec), "--model", "claude-opus-4-7", "--thinking", "auto"], project, fake_api)

    assert result.code == 0, result.stderr
    requests = fake_api.agent_requests("feat-01")
    assert all(r.body["thinking"] == {"type": "adaptive"} for r in requests)
    assert not any("anthropic-beta" in r.headers for r in requests)


@pytest.mark.parametrize(("flags", "said"), [
    (["--model", "claude-3-5-haiku-20241022", "--thinking", "2048"], "does not support extended thinking"),
    (["--model", "claude-opus-4-7", "--thinking", "4096"], "takes no thinking budget"),
    (["--model", "claude-sonnet-4-5", "--escalate-model", "claude-3-5-haiku-latest", "--thinking", "auto"],
     "claude-3-5-haiku-latest does not support"),
    (["--model", "claude-sonnet-4-5", "--thinking", "9000"], "below max_output_tokens"),
    (["--model", "claude-sonnet-4-5", "--thinking", "512"], "at least 1024"),
    (["--model", "claude-sonnet-4-5", "--thinking", "lots"], "give off, auto or a budget"),
])
def test_thinking_a_model_cannot_do_is_refused_before_any_call(fake_api, project, flags, said):
    spec = write_spec(project, 1)

    result = run_cli(["run", str(spec), *flags], project, fake_api)

    assert result.code == 2
    assert said in result.stderr
    assert fake_api.calls == 0


def test_auto_on_a_budget_model_thinks_on_retries_only() -> None:
    config = RunConfig(model="claude-sonnet-4-5", thinking="auto", max_output_tokens=8192)
    assert attempt_model(config, 1, 3).thinking is None
    retry = attempt_model(config, 2, 3)
    assert retry.thinking == {"type": "enabled", "budget_tokens": 4096}
    assert retry.request_fields()["extra_headers"] == {"anthropic-beta": INTERLEAVED_THINKING_BETA}
    assert attempt_model(RunConfig(model="claude-sonnet-4-5"), 2, 3).request_fields() == {}


def test_a_budget_is_kept_below_a_lowered_max_tokens_with_room_for_the_answer() -> None:
    request = {"thinking": {"type": "enabled", "budget_tokens": 4096}}
    assert fit_thinking_budget(request, 3000) is None
    assert request["thinking"]["budget_tokens"] == 3000 - ANSWER_HEADROOM  # 1024 tokens left to answer
    squeezed = {"thinking": {"type": "enabled", "budget_tokens": 4096}, "extra_headers": {"anthropic-beta": "x"}}
    assert "too few" in str(fit_thinking_budget(squeezed, 1500))
    assert "thinking" not in squeezed and "extra_headers" not in squeezed  # this call goes without thinking


def test_the_fake_refuses_a_thinking_block_that_was_changed(fake_api):
    import anthropic

    from fake_messages_api.thinking import sign

    client = fake_api.client()
    thought = "Step 0 of feat-01: decide"
    tool = {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls"}}
    messages = [
        {"role": "user", "content": "## Feature\nID: feat-01\n"},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": thought + "!", "signature": sign(thought)}, tool]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}]},
    ]
    tools = [{"type": "bash_20250124", "name": "bash"}]
    thinking = {"type": "enabled", "budget_tokens": 1024}
    with pytest.raises(anthropic.BadRequestError, match="signature"):
        client.messages.create(model="claude-sonnet-4-5", max_tokens=2048, messages=messages, tools=tools, thinking=thinking)
    messages[1]["content"] = [tool]  # thinking on, but the tool turn lost its thinking
    with pytest.raises(anthropic.BadRequestError, match="must start with a thinking block"):
        client.messages.create(model="claude-sonnet-4-5", max_tokens=2048, messages=messages, tools=tools, thinking=thinking)
