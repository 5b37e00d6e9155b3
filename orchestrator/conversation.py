"""The message list of one attempt: cache breakpoints and observation masking.

Breakpoints: one on the last tool, one on the system prompt, one on the last block of the
newest user message. Each request then reads the previous request's prefix from the cache
and writes only what is new. Masking replaces old tool outputs, oldest first, once the
outputs in the conversation pass a token threshold, down to half of it; a masked block stays
masked, so the cached prefix changes once in a while rather than on every call.
"""

from __future__ import annotations

import copy
from typing import Any

from context_agent.tokens import estimate_tokens

EPHEMERAL = {"type": "ephemeral"}
MASK_TEXT = "[output elided to save context: {tool} result from an earlier step; run it again if you need it]"


def with_cached_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    tools = copy.deepcopy(tools)
    if tools:
        tools[-1]["cache_control"] = EPHEMERAL
    return tools


def cached_system(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text, "cache_control": EPHEMERAL}]


def with_conversation_breakpoint(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A copy of `messages` with one breakpoint on the last block of the last user message."""
    out = [dict(m) for m in messages]
    for index in range(len(out) - 1, -1, -1):
        if out[index]["role"] != "user":
            continue
        content = out[index]["content"]
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        content = [dict(block) for block in content]
        if content:
            content[-1]["cache_control"] = EPHEMERAL
        out[index] = {**out[index], "content": content}
        break
    return out


def _result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def mask_old_observations(messages: list[dict[str, Any]], keep_tokens: int, tool_names: dict[str, str]) -> int:
    """Once the unmasked tool outputs pass `keep_tokens`, mask the oldest down to half of it. In place.

    Masking to half rather than just under the threshold leaves room for several more turns
    before the next masking: each masking changes the cached prefix from the first masked
    block on, so it should happen seldom. The outputs of the newest message, which the model
    has not seen yet, are never masked. Returns the number of blocks masked now; `tool_names`
    maps tool_use ids to tool names.
    """
    older = [message for message in messages[:-1] if message["role"] == "user" and isinstance(message["content"], list)]
    results = [
        (block, estimate_tokens(_result_text(block)))
        for message in older
        for block in message["content"]
        if block.get("type") == "tool_result" and not block.get("masked")
    ]
    newest = messages[-1]["content"] if messages and isinstance(messages[-1]["content"], list) else []
    total = sum(size for _, size in results) + sum(
        estimate_tokens(_result_text(block)) for block in newest if block.get("type") == "tool_result"
    )
    if total <= keep_tokens:
        return 0
    masked = 0
    for block, size in results:  # oldest first
        if total <= keep_tokens // 2:
            break
        tool = tool_names.get(block.get("tool_use_id", ""), "tool")
        block["content"] = MASK_TEXT.format(tool=tool)
        block["masked"] = True
        total -= size
        masked += 1
    return masked


def for_api(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Strip bookkeeping keys the API does not know."""
    clean = []
    for message in messages:
        content = message["content"]
        if isinstance(content, list):
            content = [{k: v for k, v in block.items() if k != "masked"} for block in content]
        clean.append({"role": message["role"], "content": content})
    return clean
