"""The message list of one attempt: cache breakpoints and observation masking.

Breakpoints: one on the last tool, one on the system prompt, one on the last block of the
newest user message. Each request then reads the previous request's prefix from the cache
and writes only what is new. Masking replaces old tool outputs, oldest first, once the
outputs in the conversation pass a token threshold, down to half of it; a masked block stays
masked, so the cached prefix changes once in a while rather than on every call.

Sizes are kept, not measured again on every call: each tool output's estimate is kept in the
attempt's `ObservationBook` (beside the messages, so the messages stay the API's own shape), and `AttemptRequestTokens` measures each message once (again only when masking rewrote it), so
a long attempt costs time linear in its turns, not quadratic.
"""

from __future__ import annotations

import copy
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from orchestrator.json_types import ApiMessage
from orchestrator.llm.tool_overhead import tool_overhead_tokens
from shared_base.tokens import estimate_json_tokens, estimate_tokens

if TYPE_CHECKING:  # the SDK takes seconds to import; its types are for the checker only
    from anthropic.types import (
        AssistantMessageParam,
        CacheControlEphemeralParam,
        ContentBlock,
        ContentBlockParam,
        TextBlockParam,
        ToolResultBlockParam,
        ToolUnionParam,
        UserMessageParam,
    )

    _Block = ContentBlockParam | ContentBlock  # what a message's content may hold, in the SDK's types

# The Messages API's messages ({"role", "content"}) and content blocks (text, tool_use,
# tool_result, ...) are JSON whose shapes are the API's; the SDK takes them as plain dicts.

EPHEMERAL: CacheControlEphemeralParam = {"type": "ephemeral"}
MASK_TEXT = "[output elided to save context: {tool} result from an earlier step; run it again if you need it]"
# What the conversation's breakpoint adds to the JSON of the block it goes on.
_BREAKPOINT_JSON = ',"cache_control":{"type":"ephemeral"}'


def with_cached_tools(tools: list[ToolUnionParam]) -> list[ToolUnionParam]:
    tools = copy.deepcopy(tools)
    if tools:
        tools[-1]["cache_control"] = EPHEMERAL
    return tools


def cached_system(text: str) -> list[TextBlockParam]:
    return [{"type": "text", "text": text, "cache_control": EPHEMERAL}]


def user_text(text: str) -> UserMessageParam:
    """A user message holding `text`."""
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def assistant_text(text: str) -> AssistantMessageParam:
    """An assistant message holding `text` (a replayed history's answers)."""
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def text_of(message: ApiMessage) -> str:
    """The text blocks of `message`, joined."""
    content = message["content"]
    if isinstance(content, str):
        return content
    return "".join(block["text"] for block in content if isinstance(block, dict) and block["type"] == "text")


def with_conversation_breakpoint(messages: list[ApiMessage]) -> list[ApiMessage]:
    """A copy of `messages` with one breakpoint on the last block of the last user message.

    Each block is copied too: masking rewrites the attempt's blocks in place later, and a
    request already built must not change under whoever holds it."""
    out = [_copied(m) for m in messages]
    for index in range(len(out) - 1, -1, -1):
        message = out[index]
        if message["role"] == "user":
            content = message["content"]
            blocks: list[_Block] = (
                [{"type": "text", "text": content}] if isinstance(content, str) else [_copied_block(b) for b in content]
            )
            if blocks:
                blocks[-1] = _with_breakpoint(blocks[-1])
            out[index] = {"role": "user", "content": blocks}
            break
    return out


def _copied(message: ApiMessage) -> ApiMessage:
    content = message["content"]
    if isinstance(content, str):
        return message.copy()
    blocks = [_copied_block(block) for block in content]
    if message["role"] == "user":
        return {"role": "user", "content": blocks}
    if message["role"] == "assistant":
        return {"role": "assistant", "content": blocks}
    return message.copy()  # a system turn: text the program never rewrites


def _copied_block(block: _Block) -> _Block:
    return block.copy() if isinstance(block, dict) else block


def _with_breakpoint(block: _Block) -> _Block:
    """`block` with the conversation's cache breakpoint: the last block of a user message is
    its prompt's text or a tool's result (the only blocks this program ends a user turn with)."""
    if isinstance(block, dict) and (block["type"] == "text" or block["type"] == "tool_result"):
        block["cache_control"] = EPHEMERAL
    return block


def _result_text(block: ToolResultBlockParam) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part["text"] for part in content if isinstance(part, dict) and part.get("type") == "text")
    return ""


BlockAt = tuple[int, int]  # (message index, block index) in the attempt's message list


@dataclass
class ObservationBook:
    """What the attempt knows of its tool outputs that the API never sees, kept beside the
    messages rather than in their blocks, so the messages are sent as they are."""

    tool_names: dict[str, str] = field(default_factory=dict)  # tool_use id -> tool name
    sizes: dict[BlockAt, int] = field(default_factory=dict)  # estimated tokens, measured once
    masked: set[BlockAt] = field(default_factory=set)

    def result_tokens(self, at: BlockAt, block: ToolResultBlockParam) -> int:
        """The estimated size of a tool output, measured once."""
        size = self.sizes.get(at)
        if size is None:
            size = self.sizes[at] = estimate_tokens(_result_text(block))
        return size


def _tool_results(message: ApiMessage, index: int) -> list[tuple[BlockAt, ToolResultBlockParam]]:
    content = message["content"] if message["role"] == "user" else None
    if not isinstance(content, list):
        return []
    return [((index, place), block) for place, block in enumerate(content) if block.get("type") == "tool_result"]


def mask_old_observations(
    messages: list[ApiMessage], keep_tokens: int, book: ObservationBook, touched: set[int] | None = None
) -> int:
    """Once the unmasked tool outputs pass `keep_tokens`, mask the oldest down to half of it. In place.

    Masking to half rather than just under the threshold leaves room for several more turns
    before the next masking: each masking changes the cached prefix from the first masked
    block on, so it should happen seldom. The outputs of the newest message, which the model
    has not seen yet, are never masked. Returns the number of blocks masked now; `book` keeps
    which are masked, their sizes and the tool names; the indexes of the messages it changed
    are added to `touched` (for `AttemptRequestTokens`).
    """
    results = [
        (at, block, book.result_tokens(at, block))
        for index, message in enumerate(messages[:-1])
        for at, block in _tool_results(message, index)
        if at not in book.masked
    ]
    newest = _tool_results(messages[-1], len(messages) - 1) if messages else []
    total = sum(size for _, _, size in results) + sum(book.result_tokens(at, block) for at, block in newest)
    if total <= keep_tokens:
        return 0
    masked = 0
    for at, block, size in results:  # oldest first
        if total <= keep_tokens // 2:
            break
        tool = book.tool_names.get(block.get("tool_use_id", ""), "tool")
        block["content"] = MASK_TEXT.format(tool=tool)
        book.masked.add(at)
        total -= size
        masked += 1
        if touched is not None:
            touched.add(at[0])
    return masked


class AttemptRequestTokens:
    """The estimated input tokens of an attempt's requests, kept as the conversation grows.

    Equal to measuring `{"system", "tools", "messages": with_conversation_breakpoint(messages),
    "output_config"}` whole, plus the tools' overhead (`tool_overhead`), as the
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
        return estimate_json_tokens(with_conversation_breakpoint([message])[0]) - size


def _message_tokens(message: ApiMessage) -> int:
    return estimate_json_tokens(message)
