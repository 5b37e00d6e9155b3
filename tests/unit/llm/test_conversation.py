"""The message list of one attempt: cache breakpoints and observation masking."""

from __future__ import annotations

from typing import Any

from context_agent.tokens import estimate_tokens
from orchestrator.llm.conversation import (
    MASK_TEXT,
    for_api,
    mask_old_observations,
    with_conversation_breakpoint,
)

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
        bool(block.get("masked"))
        for message in messages
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


NAMES = {f"toolu_{i:02d}": "bash" for i in range(100)}
SIZE = estimate_tokens(OUTPUT)


def test_nothing_is_masked_under_the_threshold() -> None:
    messages = conversation(4)
    assert mask_old_observations(messages, 4 * SIZE, NAMES) == 0
    assert masked_flags(messages) == [False] * 4


def test_past_the_threshold_the_oldest_are_masked_down_to_half_of_it() -> None:
    messages = conversation(10)
    masked = mask_old_observations(messages, 8 * SIZE, NAMES)
    # 10 outputs against a threshold of 8: mask the oldest until at most 4 remain.
    assert masked == 6
    assert masked_flags(messages) == [True] * 6 + [False] * 4
    placeholder = messages[2]["content"][0]["content"]
    assert placeholder == MASK_TEXT.format(tool="bash")


def test_masking_happens_seldom_so_the_cached_prefix_mostly_holds() -> None:
    messages = conversation(1)
    maskings = 0
    for index in range(1, 41):
        messages += turn(index)
        if mask_old_observations(messages, 8 * SIZE, NAMES):
            maskings += 1
    # 41 turns, one output each; masking down to half leaves room for about 4 turns between maskings.
    assert 6 <= maskings <= 10, maskings
    unmasked = sum(not flag for flag in masked_flags(messages))
    assert unmasked <= 8


def test_the_newest_outputs_are_never_masked_however_large() -> None:
    messages = conversation(2) + turn(2, OUTPUT * 20)
    mask_old_observations(messages, 4 * SIZE, NAMES)
    assert masked_flags(messages) == [True, True, False]
    assert messages[-1]["content"][0]["content"] == OUTPUT * 20


def test_a_masked_block_stays_masked_and_the_api_never_sees_the_bookkeeping() -> None:
    messages = conversation(6)
    mask_old_observations(messages, 4 * SIZE, NAMES)
    before = [dict(b) for m in messages for b in m["content"]]
    assert mask_old_observations(messages, 4 * SIZE, NAMES) == 0
    assert [dict(b) for m in messages for b in m["content"]] == before
    sent = with_conversation_breakpoint(for_api(messages))
    assert all("masked" not in block for message in sent for block in message["content"])
    assert sent[-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert sum("cache_control" in block for message in sent for block in message["content"]) == 1
