"""A request seen as the API sees it for billing and caching: one ordered list of blocks.

The API renders a prompt as tools, then system, then messages, and both prompt caching and
token counts work on that sequence. Each tool definition, each system block and each
message content block is one `PromptBlock`; a block carrying ``cache_control`` is a cache
breakpoint. A request with tools starts with the API's own tool-use system prompt, one more
block. Tokens are the fake's own count (`api_tokens`), as the API's would be: independent of
the product's estimator, which the caps built on it are checked against.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from fake_messages_api.billing.api_tokens import (
    MESSAGE_FRAMING_TOKENS,
    block_tokens,
    json_tokens,
    tool_tokens,
    tool_use_system_prompt_tokens,
)


@dataclass(frozen=True)
class PromptBlock:
    """One block of the rendered prompt."""

    section: str
    """``tools``, ``system`` or ``messages``."""
    key: str
    """Canonical JSON of the block without ``cache_control``: two blocks with the same key
    are the same content as far as the cache is concerned."""
    tokens: int
    ttl: str | None
    """``5m`` or ``1h`` if this block is a cache breakpoint, else None."""


def strip_cache_control(value: Any) -> Any:
    """`value` with every ``cache_control`` key removed, at any depth.

    The marker tells the API where to cache; it is not content, so moving a breakpoint
    must not change the identity of the blocks before it.
    """
    if isinstance(value, dict):
        return {k: strip_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [strip_cache_control(v) for v in value]
    return value


def cache_controls(value: Any) -> list[dict[str, Any]]:
    """Every non-null ``cache_control`` object in `value`, at any depth."""
    found: list[dict[str, Any]] = []
    if isinstance(value, dict):
        marker = value.get("cache_control")
        if isinstance(marker, dict):
            found.append(marker)
        for key, child in value.items():
            if key != "cache_control":
                found.extend(cache_controls(child))
    elif isinstance(value, list):
        for child in value:
            found.extend(cache_controls(child))
    return found


def text_block(text: str) -> dict[str, Any]:
    """A string prompt part as the text block the API turns it into."""
    return {"type": "text", "text": text}


def system_blocks(system: Any) -> list[dict[str, Any]]:
    """The request's ``system`` as a list of blocks (a string is one text block)."""
    if system is None or system == "":
        return []
    if isinstance(system, str):
        return [text_block(system)]
    return list(system)


def message_blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    """One message's content as a list of blocks (a string is one text block)."""
    content = message.get("content")
    if isinstance(content, str):
        return [text_block(content)] if content else []
    return list(content or [])


def _block(section: str, extra: str, raw: dict[str, Any], framing: int = 0) -> PromptBlock:
    stripped = strip_cache_control(raw)
    markers = cache_controls(raw)
    ttl = str(markers[-1].get("ttl") or "5m") if markers else None
    content_json = json.dumps(stripped, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    key = json.dumps([section, extra], separators=(",", ":")) + content_json
    tokens = tool_tokens(stripped) if section == "tools" else block_tokens(stripped)
    return PromptBlock(section, key, tokens + framing, ttl)


def prompt_blocks(request: dict[str, Any]) -> list[PromptBlock]:
    """The request's prompt in API order: tools (after the API's tool-use system prompt), system
    (then a structured output's schema), then each message's blocks (the first carries the message's framing)."""
    blocks: list[PromptBlock] = []
    if tool_prompt := tool_use_system_prompt_tokens(request):
        blocks.append(PromptBlock("tools", f'["tools","tool-use system prompt"]{tool_prompt}', tool_prompt, None))
    blocks += [_block("tools", "", tool) for tool in request.get("tools") or []]
    blocks += [_block("system", "", b) for b in system_blocks(request.get("system"))]
    output_format = (request.get("output_config") or {}).get("format")
    if isinstance(output_format, dict):
        key = '["system","output format"]' + json.dumps(output_format, sort_keys=True, separators=(",", ":"))
        blocks.append(PromptBlock("system", key, json_tokens(output_format), None))
    for index, message in enumerate(request.get("messages") or []):
        # Role and message index are part of a block's identity: the same text said by
        # the other party, or in another turn, is a different prompt.
        extra = f"{index}:{message.get('role')}"
        blocks += [
            _block("messages", extra, b, MESSAGE_FRAMING_TOKENS if at == 0 else 0)
            for at, b in enumerate(message_blocks(message))
        ]
    top_level = request.get("cache_control")
    if isinstance(top_level, dict) and blocks:
        # Automatic caching: a top-level marker is a breakpoint on the last block.
        last = blocks[-1]
        blocks[-1] = PromptBlock(last.section, last.key, last.tokens, str(top_level.get("ttl") or "5m"))
    return blocks


def prompt_tokens(request: dict[str, Any]) -> int:
    """Input tokens of the whole request, however they would be billed (what `count_tokens` answers)."""
    return sum(block.tokens for block in prompt_blocks(request))
