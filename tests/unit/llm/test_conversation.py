"""The message list of one attempt: cache breakpoints and observation masking."""

from __future__ import annotations

from typing import Any

from orchestrator.llm.conversation import (
    MASK_TEXT,
    ObservationBook,
    mask_old_observations,
    with_conversation_breakpoint,
)
from shared_base.tokens import estimate_tokens

OUTPUT = "line of output from a command\n" * 100  # about 600 tokens


def turn(index: int, output: str = OUTPUT) -> list[dict[str, Any]]:
    """One tool call by the agent and its result."""
    tool_id = f"toolu_{index:02d}"
    return [
        {"role": "assistant", "content": [{"type": "tool_use", "id": tool_id, "name": "bash", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": output}]},
    ]


def conversation(turns: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": "Build it."}]}]
    for index in range(turns):
        messages += turn(index)
    return messages


def masked_flags(messages: list[dict[str, Any]]) -> list[bool]:
    return [
        block["content"] == MASK_TEXT.format(tool="bash")
        for message in messages
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


def book() -> ObservationBook:
    return ObservationBook(tool_names={f"toolu_{i:02d}": "bash" for i in range(100)})


SIZE = estimate_tokens(OUTPUT)


def test_nothing_is_masked_under_the_threshold() -> None:
    messages = conversation(4)
    assert mask_old_observations(messages, 4 * SIZE, book()) == 0
    assert masked_flags(messages) == [False] * 4


def test_past_the_threshold_the_oldest_are_masked_down_to_half_of_it() -> None:
    messages = conversation(10)
    masked = mask_old_observations(messages, 8 * SIZE, book())
    # 10 outputs against a threshold of 8: mask the oldest until at most 4 remain.
    assert masked == 6
    assert masked_flags(messages) == [True] * 6 + [False] * 4
    placeholder = messages[2]["content"][0]["content"]
    assert placeholder == MASK_TEXT.format(tool="bash")


def test_masking_happens_seldom_so_the_cached_prefix_mostly_holds() -> None:
    messages, kept = conversation(1), book()
    maskings = 0
    for index in range(1, 41):
        messages += turn(index)
        if mask_old_observations(messages, 8 * SIZE, kept):
            maskings += 1
    # 41 turns, one output each; masking down to half leaves room for about 4 turns between maskings.
    assert 6 <= maskings <= 10, maskings
    unmasked = sum(not flag for flag in masked_flags(messages))
    assert unmasked <= 8


def test_the_newest_outputs_are_never_masked_however_large() -> None:
    messages = conversation(2) + turn(2, OUTPUT * 20)
    mask_old_observations(messages, 4 * SIZE, book())
    assert masked_flags(messages) == [True, True, False]
    assert messages[-1]["content"][0]["content"] == OUTPUT * 20


def test_a_masked_block_stays_masked_and_the_api_never_sees_the_bookkeeping() -> None:
    messages, kept = conversation(6), book()
    mask_old_observations(messages, 4 * SIZE, kept)
    before = [dict(b) for m in messages for b in m["content"]]
    assert mask_old_observations(messages, 4 * SIZE, kept) == 0
    assert [dict(b) for m in messages for b in m["content"]] == before
    assert kept.masked  # the bookkeeping is the book's, not the blocks'
    sent = with_conversation_breakpoint(messages)
    api_keys = {"type", "tool_use_id", "content", "id", "name", "input", "text", "cache_control"}
    assert all(set(block) <= api_keys for message in sent for block in message["content"])
    assert sent[-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert sum("cache_control" in block for message in sent for block in message["content"]) == 1


def test_a_request_already_built_does_not_change_when_masking_rewrites_the_attempt() -> None:
    messages, kept = conversation(6), book()
    sent = with_conversation_breakpoint(messages)
    assert mask_old_observations(messages, 4 * SIZE, kept) > 0
    assert all(block["content"] == OUTPUT for m in sent for block in m["content"] if block["type"] == "tool_result")
