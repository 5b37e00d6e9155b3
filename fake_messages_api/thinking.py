"""Extended thinking in the fake: signed thinking blocks out, the API's thinking rules in.

A request with ``thinking`` (``enabled`` with a budget, or ``adaptive``) gets a thinking block
before the plan's blocks, and every third step a ``redacted_thinking`` block after it. Both
are signed (an HMAC the fake alone knows), so a block the client changed, or made up, or
took from another conversation's turn, is refused as the API refuses it. The rules checked
are the API's: a budget of at least 1024 and below max_tokens (unless interleaved thinking
is on through the beta header), no temperature / top_k / top_p or forced tool choice with
thinking, thinking blocks only in assistant turns, and with thinking on, an assistant turn
that used a tool starts with its thinking.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from fake_messages_api.api_errors import invalid_request

INTERLEAVED_BETA = "interleaved-thinking-2025-05-14"
MIN_BUDGET = 1024
_SECRET = b"fake-api-thinking-signing-key"
_THINKING_TYPES = ("thinking", "redacted_thinking")


def thinking_on(body: dict[str, Any]) -> bool:
    thinking = body.get("thinking")
    return isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")


def sign(text: str) -> str:
    return hmac.new(_SECRET, text.encode(), hashlib.sha256).hexdigest()


def thinking_blocks(feature_id: str | None, step: int, context: str) -> list[dict[str, Any]]:
    """The thinking the fake "model" does before answering step `step` of a feature.

    `context` (the request's last message, say) goes into the text, so that two turns never
    think the same words and a block moved from one turn to another is caught.
    """
    thought = f"Step {step} of {feature_id}: decide the next tool call. [{sign(context)[:12]}]"
    blocks: list[dict[str, Any]] = [{"type": "thinking", "thinking": thought, "signature": sign(thought)}]
    if step % 3 == 2:
        data = f"redacted:{sign('redacted' + thought)}"
        blocks.append({"type": "redacted_thinking", "data": data})
    return blocks


def _signature_ok(block: dict[str, Any]) -> bool:
    if block.get("type") == "thinking":
        return hmac.compare_digest(str(block.get("signature", "")), sign(str(block.get("thinking", ""))))
    data = str(block.get("data", ""))
    return data.startswith("redacted:") and len(data) == len("redacted:") + 64


def validate_thinking(body: dict[str, Any], betas: list[str]) -> None:
    """Raise the API's 400 for a request that breaks a thinking rule."""
    given = body.get("messages")
    messages: list[Any] = given if isinstance(given, list) else []
    _check_blocks(messages)
    if not thinking_on(body):
        return
    thinking = body["thinking"]
    if thinking["type"] == "enabled":
        budget = thinking.get("budget_tokens")
        if not isinstance(budget, int) or budget < MIN_BUDGET:
            raise invalid_request(f"thinking.enabled.budget_tokens: Input should be greater than or equal to {MIN_BUDGET}")
        if budget >= body.get("max_tokens", 0) and INTERLEAVED_BETA not in betas:
            raise invalid_request("`max_tokens` must be greater than `thinking.budget_tokens`")
    for key in ("temperature", "top_k", "top_p"):
        if key in body:
            raise invalid_request(f"`{key}` is not supported when thinking is enabled")
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") in ("any", "tool"):
        raise invalid_request("Thinking may not be enabled when tool_choice forces tool use.")
    _check_tool_turn_starts_with_thinking(messages)


def _check_blocks(messages: list[Any]) -> None:
    for i, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        for j, block in enumerate(content if isinstance(content, list) else []):
            if not isinstance(block, dict) or block.get("type") not in _THINKING_TYPES:
                continue
            if message.get("role") != "assistant":
                raise invalid_request(f"messages.{i}.content.{j}: thinking blocks may only be in assistant messages")
            if not _signature_ok(block):
                raise invalid_request(f"messages.{i}.content.{j}: Invalid `signature` in `thinking` block")


def _check_tool_turn_starts_with_thinking(messages: list[Any]) -> None:
    assistant = [i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "assistant"]
    if not assistant:
        return
    index = assistant[-1]
    content = messages[index].get("content")
    if not isinstance(content, list) or not any(isinstance(b, dict) and b.get("type") == "tool_use" for b in content):
        return
    first = content[0] if content else {}
    if not (isinstance(first, dict) and first.get("type") in _THINKING_TYPES):
        kind = first.get("type") if isinstance(first, dict) else "?"
        raise invalid_request(
            f"messages.{index}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{kind}`. When "
            "`thinking` is enabled, a final `assistant` message must start with a thinking block."
        )
