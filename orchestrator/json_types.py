"""Names for the JSON this program passes on without owning its shape.

Our own files and results are pydantic models or dataclasses (`orchestrator.store`,
`orchestrator.run.checks.check_command`, `context_agent.feature_records`). What is left as a plain mapping is JSON
whose shape belongs to someone else: the Messages API's requests, messages and blocks, a tool's
input as the model wrote it, JSON schemas, the agent's free-form report, keyword arguments for
an SDK client, or a model dumped just before it is written. Each has a name here that says
which; `tests/unit/test_architecture.py` keeps `dict[str, Any]` out of every other module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:  # the SDK takes seconds to import; its types are for the checker only
    from anthropic.types import ContentBlockParam, MessageParam

JsonObject = dict[str, Any]
"""A JSON object with no schema of ours: a model dumped for writing, or read before validation."""

ApiRequest = dict[str, Any]
"""A Messages API request (model, max_tokens, system, tools, messages, ...) as the SDK takes it."""

ApiMessage: TypeAlias = "MessageParam"
"""One message of a request: role and content, the SDK's own TypedDict."""

ApiBlock: TypeAlias = "ContentBlockParam"
"""One content block of a request (text, tool_use, tool_result, thinking, ...): the SDK's own
TypedDicts; read back by narrowing on its `type`."""

JsonSchema = dict[str, Any]
"""A JSON schema (a structured answer's, a tool's input)."""

ToolInput = dict[str, Any]
"""A tool's input as the model wrote it; each tool validates what it reads."""

AgentReport = dict[str, Any]
"""The agent's `report_feature` input, kept as given: free-form by the product spec."""

SdkOptions = dict[str, Any]
"""Keyword arguments for an anthropic SDK client's constructor."""
