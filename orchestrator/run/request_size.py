"""How many input tokens the first request of an attempt costs, estimated before it is sent.

The request is built as the agent loop builds it (system prompt, tools and messages, with
their cache breakpoints) and measured with the program's one token estimator. Its JSON is
not all the API counts: a request with tools also carries the API's own tool-use system
prompt, and each Anthropic-defined tool (bash, the text editor) a fixed block of its own.
Anthropic's tool-use pricing lists these; they are added here, so the estimate shown to the
user covers the whole request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from context_agent import estimate_json_tokens
from orchestrator.llm.conversation import cached_system, for_api, with_cached_tools, with_conversation_breakpoint

# Tokens the API adds for tool use (tool_choice auto) and for each Anthropic-defined tool,
# from Anthropic's tool-use pricing for the Claude 4 models.
TOOL_USE_SYSTEM_PROMPT_TOKENS = 346
ANTHROPIC_TOOL_TOKENS = {"bash_": 245, "text_editor_": 700}


@dataclass(frozen=True)
class RequestSize:
    """Estimated input tokens of one request, by part."""

    system: int
    tools: int
    messages: int

    @property
    def total(self) -> int:
        return self.system + self.tools + self.messages


def tool_overhead_tokens(tools: list[dict[str, Any]]) -> int:
    """What the API adds to a request for its tools, beyond their JSON."""
    if not tools:
        return 0
    added = TOOL_USE_SYSTEM_PROMPT_TOKENS
    for tool in tools:
        kind = str(tool.get("type", ""))
        added += next((tokens for prefix, tokens in ANTHROPIC_TOOL_TOKENS.items() if kind.startswith(prefix)), 0)
    return added


def first_request_size(
    system: str, tools: list[dict[str, Any]], history: list[dict[str, Any]], prompt: str
) -> RequestSize:
    """The first request of an attempt: `history` (replayed messages), then `prompt`."""
    messages = [*history, {"role": "user", "content": [{"type": "text", "text": prompt}]}]
    sent_tools = with_cached_tools(tools)
    return RequestSize(
        system=estimate_json_tokens(cached_system(system)),
        tools=estimate_json_tokens(sent_tools) + tool_overhead_tokens(sent_tools),
        messages=estimate_json_tokens(with_conversation_breakpoint(for_api(messages))),
    )
