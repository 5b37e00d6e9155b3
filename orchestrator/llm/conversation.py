"""The message list of one attempt: cache breakpoints and observation masking.

Breakpoints: one on the last tool, one on the system prompt, one on the last block of the
newest user message. Each request then reads the previous request's prefix from the cache
and writes only what is new. Masking replaces old tool outputs, oldest first, once the
outputs in the conversation pass a token threshold, down to half of it; a masked block stays
masked, so the cached prefix changes once in a while rather than on every call.

Sizes are kept, not measured again on every call: each tool output's estimate is kept in its
block, and `RequestSize` measures each message once (again only when masking rewrote it), so
a long attempt costs time linear in its turns, not quadratic.
"""

from __future__ import annotations

import copy
from collections.abc import Collection
from typing import TYPE_CHECKING

from context_agent.tokens import estimate_json_tokens, estimate_tokens
from orchestrator.json_types import ApiBlock, ApiMessage
from orchestrator.llm.tool_overhead import tool_overhead_tokens

if TYPE_CHECKING:  # the SDK takes seconds to import; its types are for the checker only
    from anthropic.types import CacheControlEphemeralParam, TextBlockParam, ToolUnionParam

# The Messages API's messages ({"role", "content"}) and content blocks (text, tool_use,
# tool_result, ...) are JSON whose shapes are the API's; the SDK takes them as plain dicts.

EPHEMERAL: CacheControlEphemeralParam = {"type": "ephemeral"}
MASK_TEXT = "[output elided to save context: {tool} result from an earlier step; run it again if you need it]"
# Keys kept in the attempt's own blocks that the API never sees (`for_api` strips them).
_MASKED, _TOKENS = "masked", "estimated_tokens"
_BOOKKEEPING = frozenset({_MASKED, _TOKENS})
# What the conversation's breakpoint adds to the JSON of the block it goes on.
_BREAKPOINT_JSON = ',"cache_control":{"type":"ephemeral"}'


def with_cached_tools(tools: list[ToolUnionParam]) -> list[ToolUnionParam]:
    tools = copy.deepcopy(tools)
    if tools:
        tools[-1]["cache_control"] = EPHEMERAL
    return tools


def cached_system(text: str) -> list[TextBlockParam]:
    return [{"type": "text", "text": text, "cache_control": EPHEMERAL}]


def with_conversation_breakpoint(messages: list[ApiMessage]) -> list[ApiMessage]:
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


def _result_text(block: ApiBlock) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def _result_tokens(block: ApiBlock) -> int:
    """The estimated size of a tool output, measured once and kept in its block."""
    size = block.get(_TOKENS)
    if not isinstance(size, int):
        size = block[_TOKENS] = estimate_tokens(_result_text(block))
    return size


def mask_old_observations(
    messages: list[ApiMessage], keep_tokens: int, tool_names: dict[str, str], touched: set[int] | None = None
) -> int:
    """Once the unmasked tool outputs pass `keep_tokens`, mask the oldest down to half of it. In place.

    Masking to half rather than just under the threshold leaves room for several more turns
    before the next masking: each masking changes the cached prefix from the first masked
    block on, so it should happen seldom. The outputs of the newest message, which the model
    has not seen yet, are never masked. Returns the number of blocks masked now; `tool_names`
    maps tool_use ids to tool names; the indexes of the messages it changed are added to
    `touched` (for `RequestSize`).
    """
    results = [
        (index, block, _result_tokens(block))
        for index, message in enumerate(messages[:-1])
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result" and not block.get(_MASKED)
    ]
    newest = messages[-1]["content"] if messages and isinstance(messages[-1]["content"], list) else []
    total = sum(size for _, _, size in results) + sum(
        _result_tokens(block) for block in newest if block.get("type") == "tool_result"
    )
    if total <= keep_tokens:
        return 0
    masked = 0
    for index, block, size in results:  # oldest first
        if total <= keep_tokens // 2:
            break
        tool = tool_names.get(block.get("tool_use_id", ""), "tool")
        block["content"] = MASK_TEXT.format(tool=tool)
        block[_MASKED] = True
        total -= size
        masked += 1
        if touched is not None:
            touched.add(index)
    return masked


def for_api(messages: list[ApiMessage]) -> list[ApiMessage]:
    """Strip bookkeeping keys the API does not know."""
    clean = []
    for message in messages:
        content = message["content"]
        if isinstance(content, list):
            content = [{k: v for k, v in block.items() if k not in _BOOKKEEPING} for block in content]
        clean.append({"role": message["role"], "content": content})
    return clean


class RequestSize:
    """The estimated input tokens of an attempt's requests, kept as the conversation grows.

    Equal to measuring `{"system", "tools", "messages": with_conversation_breakpoint(for_api(
    messages)), "output_config"}` whole, plus the tools' overhead (`tool_overhead`), as the
    model client otherwise would on every call (`request_tokens`):
    the JSON of a list is its items' JSON joined by commas, and no estimated piece spans two
    items. The system prompt and tools are measured once, each message when it is added (and
    again when masking changed it), so an attempt of n turns measures O(n) text, not O(n^2).
    """

    def __init__(self, system: list[TextBlockParam], tools: list[ToolUnionParam]) -> None:
        # The tokens the API adds for the tools count too: caps must see what the API counts.
        self._fixed = estimate_json_tokens(
            {"system": system, "tools": tools, "messages": [], "output_config": None}
        ) + tool_overhead_tokens(tools)
        self._sizes: list[int] = []
        self._total = 0

    def tokens(self, messages: list[ApiMessage], changed: Collection[int] = ()) -> int:
        """The size of the request carrying `messages`: the list measured last time plus what was
        appended since; `changed` names messages rewritten in place since then (masking)."""
        for index in changed:
            if index < len(self._sizes):
                size = _message_tokens(messages[index])
                self._total += size - self._sizes[index]
                self._sizes[index] = size
        for message in messages[len(self._sizes):]:
            size = _message_tokens(message)
            self._sizes.append(size)
            self._total += size
        total = self._fixed + self._total + max(0, len(messages) - 1)  # the commas between messages
        for index in range(len(messages) - 1, -1, -1):
            if messages[index]["role"] == "user":  # where the conversation's cache breakpoint goes
                return total + self._breakpoint_tokens(messages[index], self._sizes[index])
        return total

    @staticmethod
    def _breakpoint_tokens(message: ApiMessage, size: int) -> int:
        content = message["content"]
        if isinstance(content, list) and content and isinstance(content[-1], dict) and "cache_control" not in content[-1]:
            return estimate_tokens(_BREAKPOINT_JSON)  # one key added to the last block
        return estimate_json_tokens(with_conversation_breakpoint(for_api([message]))[0]) - size


def _message_tokens(message: ApiMessage) -> int:
    return estimate_json_tokens(for_api([message])[0])
