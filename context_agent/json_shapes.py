"""Names for the JSON the Context Agent passes on without owning its shape (it imports nothing
from `orchestrator`, so it keeps its own; see `orchestrator.json_types` for the rule)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:  # the SDK takes seconds to import; its types are for the checker only
    from anthropic.types import MessageParam, OutputConfigParam

JsonSchema = dict[str, Any]
"""The JSON schema of the summarizer's structured answer."""


class SummarizerRequest(TypedDict):
    """The summarizer's Messages API request, as the model-call function takes it: the keyword
    arguments of the SDK's `messages.create`, typed with the SDK's own param types."""

    model: str
    max_tokens: int
    system: str
    messages: list[MessageParam]
    output_config: OutputConfigParam
