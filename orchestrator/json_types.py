"""Names for the JSON this program passes on without owning its shape.

Our own files and results are pydantic models or dataclasses (`orchestrator.store`,
`orchestrator.run.checks.running.check_command`, `context_agent.records.feature_records`). What is left is JSON
whose shape belongs to someone else. The Messages API's requests, messages and blocks are typed
with the SDK's own TypedDicts, or ours built from its param types where the SDK publishes none
that fits (`ApiRequest`, `RequestDraft`). The rest stays a plain mapping: a request another
program sent, a tool's input as the model wrote it, JSON schemas, the agent's free-form report,
keyword arguments for an SDK client, or a model dumped just before it is written. Each has a
name here that says which; `tests/unit/test_architecture.py` keeps `dict[str, Any]` out of
every other module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Required, TypeAlias, TypedDict, TypeVar

if TYPE_CHECKING:  # the SDK takes seconds to import; its types are for the checker only
    from anthropic.types import (
        ContentBlockParam,
        MessageParam,
        OutputConfigParam,
        TextBlockParam,
        ThinkingConfigParam,
        ToolChoiceParam,
        ToolUnionParam,
    )

JsonObject = dict[str, Any]
"""A JSON object with no schema of ours: a model dumped for writing, or read before validation."""

ApiMessage: TypeAlias = "MessageParam"
"""One message of a request: role and content, the SDK's own TypedDict."""

ApiBlock: TypeAlias = "ContentBlockParam"
"""One content block of a request (text, tool_use, tool_result, thinking, ...): the SDK's own
TypedDicts; read back by narrowing on its `type`."""


class ThinkingFields(TypedDict, total=False):
    """What an attempt's requests add for thinking (`llm.attempt_model.AttemptModel.request_fields`)."""

    thinking: ThinkingConfigParam
    extra_headers: dict[str, str]
    """The interleaved-thinking beta header, sent beside the body (`messages.stream(extra_headers=...)`)."""


class ApiRequest(ThinkingFields, total=False):
    """A Messages API request as `ModelClient.create` takes it and `messages.stream` is called with.

    Built from the SDK's own param types. Not the SDK's request TypedDict itself: `anthropic.types`
    publishes it only as `MessageCreateParams`, a union with the streaming variant, whose `stream`
    key `messages.stream` does not take; and a request here carries its `extra_headers` (a keyword
    of the call, not a key of the body) with it. Lists, not the SDK's `Iterable`s: the books
    measure a request, and a conversation is appended to and read back.
    """

    model: Required[str]
    max_tokens: Required[int]
    messages: Required[list[ApiMessage]]
    system: str | list[TextBlockParam]
    tools: list[ToolUnionParam]
    tool_choice: ToolChoiceParam
    output_config: OutputConfigParam


class RequestDraft(TypedDict):
    """An attempt's first request without model and max_tokens (`run.attempt.first_request`):
    what `orchestrate context` measures, and counts with count_tokens."""

    system: list[TextBlockParam]
    tools: list[ToolUnionParam]
    messages: list[ApiMessage]


ForeignRequest = dict[str, Any]
"""A Messages API request another program sent (Claude Code, through the metering proxy), as
it sent it: its keys are not ours to know."""

BookedRequest = TypeVar("BookedRequest", ApiRequest, ForeignRequest)
"""A request the books measure and fit before it is sent (`llm.call_books`): one of ours, or one
the metering proxy passes on. Constrained, not a union: each kind is checked as what it is, so
what the books write into one of ours (a lowered thinking budget) is checked against its type."""

JsonSchema = dict[str, Any]
"""A JSON schema (a structured answer's, a tool's input)."""

ToolInput = dict[str, Any]
"""A tool's input as the model wrote it; each tool validates what it reads."""

AgentReport = dict[str, Any]
"""The agent's `report_feature` input, kept as given: free-form by the product spec."""

SdkOptions = dict[str, Any]
"""Keyword arguments for an anthropic SDK client's constructor."""
