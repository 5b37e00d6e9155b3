"""How many input tokens the first request of an attempt costs, estimated before it is sent.

The request is built as the agent loop builds it (system prompt, tools and messages, with
their cache breakpoints) and measured with the program's one token estimator. Its JSON is
not all the API counts: the tokens the API adds for tools (`orchestrator.llm.tool_overhead`)
are added here, so the estimate shown to the user covers the whole request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from orchestrator.json_types import ApiMessage, RequestDraft
from orchestrator.llm.conversation import cached_system, user_text, with_cached_tools, with_conversation_breakpoint
from orchestrator.llm.tool_overhead import tool_overhead_tokens
from shared_base.tokens import estimate_json_tokens

if TYPE_CHECKING:  # the SDK takes seconds to import; its types are for the checker only
    from anthropic.types import ToolUnionParam


@dataclass(frozen=True)
class RequestTokensByPart:
    """Estimated input tokens of one request, by part."""

    system: int
    tools: int
    messages: int

    @property
    def total(self) -> int:
        return self.system + self.tools + self.messages


def first_request(
    system: str, tools: list[ToolUnionParam], history: list[ApiMessage], prompt: str
) -> RequestDraft:
    """The first request of an attempt as the agent loop sends it, without model and max_tokens:
    `history` (replayed messages), then `prompt`, with the cache breakpoints."""
    messages = [*history, user_text(prompt)]
    return {
        "system": cached_system(system),
        "tools": with_cached_tools(tools),
        "messages": with_conversation_breakpoint(messages),
    }


def first_request_size(
    system: str, tools: list[ToolUnionParam], history: list[ApiMessage], prompt: str
) -> RequestTokensByPart:
    """The estimated size of `first_request`, by part."""
    request = first_request(system, tools, history, prompt)
    return RequestTokensByPart(
        system=estimate_json_tokens(request["system"]),
        tools=estimate_json_tokens(request["tools"]) + tool_overhead_tokens(request["tools"]),
        messages=estimate_json_tokens(request["messages"]),
    )
