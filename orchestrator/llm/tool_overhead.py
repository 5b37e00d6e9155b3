"""Tokens the API adds to a request for its tools, beyond the JSON the request carries.

A request with tools also carries the API's own tool-use system prompt, and each
Anthropic-defined tool (bash, the text editor) a fixed block of its own. Anthropic's
tool-use pricing lists these for the Claude 4 models: 346 tokens of system prompt with
`tool_choice` auto or none (313 with any or tool), 245 for the bash tool, 700 for the text
editor. Every estimate of a request's size adds them, so caps and `orchestrate context` see
what the API counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the SDK takes seconds to import; its types are for the checker only
    from anthropic.types import ToolChoiceParam, ToolUnionParam


TOOL_USE_SYSTEM_PROMPT_TOKENS = 346  # tool_choice auto (the agent's) or none
FORCED_TOOL_SYSTEM_PROMPT_TOKENS = 313  # tool_choice any or tool
ANTHROPIC_TOOL_TOKENS = {"bash_": 245, "text_editor_": 700}


def tool_overhead_tokens(tools: Sequence[ToolUnionParam] | None, tool_choice: ToolChoiceParam | None = None) -> int:
    """What the API adds to a request for `tools` (and its `tool_choice`), beyond their JSON."""
    if not tools:
        return 0
    forced = isinstance(tool_choice, dict) and tool_choice.get("type") in ("any", "tool")
    added = FORCED_TOOL_SYSTEM_PROMPT_TOKENS if forced else TOOL_USE_SYSTEM_PROMPT_TOKENS
    for tool in tools:
        kind = str(tool.get("type", ""))
        added += next((tokens for prefix, tokens in ANTHROPIC_TOOL_TOKENS.items() if kind.startswith(prefix)), 0)
    return added
