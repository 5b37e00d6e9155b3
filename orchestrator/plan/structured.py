"""One structured answer: a forced tool-use call through the `ModelClient`.

The model is offered one tool and forced to call it (`tool_choice`), so its answer is that
call's `input`, a JSON object shaped by the tool's schema. The client checks the cost cap
before the call (`LimitReached`), retries transient faults and books what the call cost.
A conversation is kept so that a repair can follow: the answer goes back as the assistant's
turn and the problems found in it as the tool's error result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from orchestrator.json_types import ApiBlock, ApiMessage, ApiRequest, ToolInput
from orchestrator.llm.client import ModelClient
from orchestrator.llm.conversation import user_text
from orchestrator.llm.reply_blocks import reply_blocks

if TYPE_CHECKING:  # the SDK takes seconds to import; its types are for the checker only
    from anthropic.types import ToolParam

PURPOSE = "plan"


@dataclass
class StructuredAnswer:
    """What one forced call returned: the tool input (None when there was no call) and its id."""

    data: ToolInput | None
    tool_use_id: str | None
    cut_off: bool
    """The answer hit max_tokens (its tool call, if any, may be incomplete)."""


@dataclass
class ForcedToolConversation:
    """A conversation in which every model turn is a call of the one `tool`."""

    client: ModelClient
    model: str
    system: str
    tool: ToolParam
    max_tokens: int
    messages: list[ApiMessage] = field(default_factory=list)

    def ask(self, text: str) -> StructuredAnswer:
        """Send `text` as a new user turn and return the forced answer."""
        self.messages.append(user_text(text))
        return self._call()

    def reject(self, answer: StructuredAnswer, problems: str) -> StructuredAnswer:
        """Tell the model what is wrong with `answer` and return its next one."""
        if answer.tool_use_id is not None:
            content: list[ApiBlock] = [
                {"type": "tool_result", "tool_use_id": answer.tool_use_id, "content": problems, "is_error": True}
            ]
        else:
            content = [{"type": "text", "text": problems}]
        self.messages.append({"role": "user", "content": content})
        return self._call()

    def request(self) -> ApiRequest:
        """The request the next call sends."""
        return forced_request(self.model, self.max_tokens, self.system, self.tool, self.messages)

    def _call(self) -> StructuredAnswer:
        message = self.client.create(purpose=PURPOSE, **self.request()).message
        blocks, _unknown = reply_blocks(message.content)  # a forced answer is one tool call; the rest is left out
        self.messages.append({"role": "assistant", "content": blocks or [{"type": "text", "text": "(no answer)"}]})
        cut_off = getattr(message, "stop_reason", None) == "max_tokens"
        for block in blocks:
            if block.get("type") == "tool_use" and block.get("name") == self.tool["name"]:
                data = block.get("input")
                return StructuredAnswer(data if isinstance(data, dict) else None, str(block.get("id")), cut_off)
        return StructuredAnswer(None, None, cut_off)


def forced_request(
    model: str, max_tokens: int, system: str, tool: ToolParam, messages: list[ApiMessage]
) -> ApiRequest:
    """A Messages API request that forces a call of `tool` (also what `--dry-run` prints)."""
    return {
        "model": model,
        "max_tokens": max_tokens,
        "system": system,
        "tools": [tool],
        "tool_choice": {"type": "tool", "name": tool["name"]},
        "messages": list(messages),
    }

