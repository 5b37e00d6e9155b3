"""A model's answer as the blocks sent back in the next request: what the API takes again.

The API refuses an empty text block (400 `text content blocks must be non-empty`) and a
block type it does not take as input, yet its answers can hold both: an empty text before a
tool call, a block type newer than this program. Blocks the API documents as round-trippable
go back exactly as they came (thinking with its signature, server tool blocks with their
ids); empty text is dropped; any other type is left out, and named so the caller can say so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from orchestrator.json_types import ApiBlock

if TYPE_CHECKING:  # the SDK takes seconds to import; its types are for the checker only
    from anthropic.types import ContentBlock

# Blocks of an answer that may be sent back in an assistant turn (the API's content block
# params): text, client and server tool calls, thinking, and the server tools' results.
ROUND_TRIP_TYPES = frozenset({
    "text", "tool_use", "thinking", "redacted_thinking", "server_tool_use", "web_search_tool_result",
    "web_fetch_tool_result", "code_execution_tool_result", "bash_code_execution_tool_result",
    "text_editor_code_execution_tool_result", "tool_search_tool_result", "container_upload",
})


def block_dict(block: ContentBlock | ApiBlock) -> ApiBlock:
    """An SDK content block (or a plain dict) as the plain dict sent back."""
    if isinstance(block, dict):
        return dict(block)
    if block.type == "text":
        return {"type": "text", "text": block.text}
    if block.type == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    dumped: ApiBlock = block.model_dump(exclude_none=True)  # thinking with its signature, server tool blocks
    return dumped


def reply_blocks(content: Sequence[ContentBlock | ApiBlock]) -> tuple[list[ApiBlock], list[str]]:
    """The blocks of `content` to send back, and the types left out because the API would refuse them."""
    kept: list[ApiBlock] = []
    unknown: list[str] = []
    for block in content:
        plain = block_dict(block)
        kind = str(plain.get("type"))
        if kind == "text" and not plain.get("text"):
            continue  # an empty text block: nothing said, and refused when sent back
        if kind not in ROUND_TRIP_TYPES:
            if kind not in unknown:
                unknown.append(kind)
            continue
        kept.append(plain)
    return kept, unknown
