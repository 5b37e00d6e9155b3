"""Reading a request the way the scripted agent needs it: which feature, which step.

The orchestrator's first user message for a feature holds a ``## Feature`` section with an
``ID: <feature-id>`` line. History replayed into ``messages[]`` (``--context replay``) holds
old feature requests too, but every such message starts with ``WM_KIND=``; the request being
worked on is the last one that does not. The step is the number of assistant turns the
conversation already has after that request, so a retry (a fresh conversation) starts at 0.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

FEATURE_HEADING = "## Feature"
REPLAY_PREFIX = "WM_KIND="
_FEATURE_ID = re.compile(r"^ID: (\S+)$", re.MULTILINE)
_VERIFICATION = re.compile(r"^## Last Verification Result\s*$", re.MULTILINE)
_PLAIN_OUTPUT = re.compile(r"^(`{3,})text\n(.*?)\n\1$", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class ToolResultBlock:
    """One ``tool_result`` block of the last user message, flattened to text."""

    tool_use_id: str
    content: str
    is_error: bool


@dataclass(frozen=True)
class FeatureRequest:
    """Where the current feature request sits in a conversation."""

    feature_id: str
    message_index: int
    text: str


@dataclass(frozen=True)
class AgentTurn:
    """Everything a plan may look at to decide the agent's next reply."""

    feature_id: str
    step: int
    """Assistant turns already taken in this conversation (0 on the first call)."""
    request_text: str
    """The text block holding ``## Feature`` (and ``## Last Verification Result`` on retries)."""
    tool_results: list[ToolResultBlock] = field(default_factory=list)
    """The tool results the orchestrator sent back in the last user message."""
    request: dict[str, Any] = field(default_factory=dict)
    """The whole request JSON."""

    @property
    def last_verification(self) -> dict[str, Any] | None:
        """The parsed ``## Last Verification Result`` JSON, or None on a first attempt."""
        return parse_verification(self.request_text)

    @property
    def is_retry(self) -> bool:
        """True when the request carries a previous verification result."""
        return self.last_verification is not None


def text_blocks(message: dict[str, Any]) -> list[str]:
    """The texts of a message's text blocks (a string content is one block)."""
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    return [b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"]


def find_feature_request(messages: list[dict[str, Any]]) -> FeatureRequest | None:
    """The last user text block that asks for a feature, skipping replayed history."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.get("role") != "user":
            continue
        for text in reversed(text_blocks(message)):
            if FEATURE_HEADING not in text or text.lstrip().startswith(REPLAY_PREFIX):
                continue
            section = text[text.index(FEATURE_HEADING):]
            match = _FEATURE_ID.search(section)
            if match:
                return FeatureRequest(match.group(1), index, text)
    return None


def tool_results_of(message: dict[str, Any]) -> list[ToolResultBlock]:
    """The tool results in `message`, with their content flattened to text."""
    content = message.get("content")
    if not isinstance(content, list):
        return []
    results = []
    for block in content:
        if not isinstance(block, dict) or block.get("type") != "tool_result":
            continue
        inner = block.get("content")
        if isinstance(inner, list):
            text = "\n".join(b.get("text", "") for b in inner if isinstance(b, dict))
        else:
            text = inner or ""
        results.append(ToolResultBlock(str(block.get("tool_use_id")), text, bool(block.get("is_error"))))
    return results


def parse_verification(text: str) -> dict[str, Any] | None:
    """The JSON object right after a ``## Last Verification Result`` heading, if any, with the
    check's output (given after it as plain text) under ``output``."""
    match = _VERIFICATION.search(text)
    if not match:
        return None
    rest = text[match.end():]
    start = rest.find("{")
    if start < 0:
        return None
    try:
        value, end = json.JSONDecoder().raw_decode(rest[start:])
    except json.JSONDecodeError:
        return None
    if not isinstance(value, dict):
        return None
    if "output" not in value:  # the output follows the JSON as plain text, fenced, when there is any
        section = rest[start + end:].split("\n## ", 1)[0]
        found = _PLAIN_OUTPUT.search(section)
        value["output"] = found.group(2) if found else ""
    return value


def agent_turn(request: dict[str, Any]) -> AgentTurn | None:
    """The turn to play for `request`, or None when it asks for no feature."""
    messages = request.get("messages") or []
    found = find_feature_request(messages)
    if found is None:
        return None
    later = messages[found.message_index + 1:]
    step = sum(1 for m in later if m.get("role") == "assistant")
    results = tool_results_of(messages[-1]) if messages and messages[-1].get("role") == "user" else []
    return AgentTurn(found.feature_id, step, found.text, results, request)
