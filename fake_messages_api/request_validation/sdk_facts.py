"""What the installed `anthropic` SDK says a request may contain.

The fake validates requests the way the API does, and the SDK's request types are generated
from the API's own schema. Reading the names from them (rather than copying lists here) keeps
the fake in step with the SDK the project actually runs: a new typed tool or request field in
an SDK upgrade is accepted without touching the fake. A static fallback covers the names the
orchestrator relies on, should the SDK's private layout ever change.
"""

from __future__ import annotations

import typing
from functools import cache
from typing import Any

_FALLBACK_PARAMS = frozenset(
    {
        "model", "messages", "max_tokens", "system", "tools", "tool_choice", "stream",
        "metadata", "stop_sequences", "thinking", "output_config", "service_tier",
        "cache_control", "container", "inference_geo", "speed",
    }
)
_FALLBACK_TYPED_TOOLS = {
    "bash_20250124": "bash",
    "text_editor_20250124": "str_replace_editor",
    "text_editor_20250429": "str_replace_based_edit_tool",
    "text_editor_20250728": "str_replace_based_edit_tool",
}
_FALLBACK_BLOCK_TYPES = frozenset(
    {"text", "image", "document", "thinking", "redacted_thinking", "tool_use", "tool_result"}
)


def _literals(annotation: Any) -> tuple[Any, ...]:
    """The values of a (possibly Required/Optional-wrapped) Literal annotation."""
    while typing.get_origin(annotation) in (typing.Required, typing.NotRequired, typing.Union):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if not args:
            return ()
        annotation = args[0]
    if typing.get_origin(annotation) is typing.Literal:
        return typing.get_args(annotation)
    return ()


@cache
def request_params(endpoint: str, beta: bool = False) -> frozenset[str]:
    """Top-level fields the API accepts for `endpoint` (``messages`` or ``count_tokens``)."""
    try:
        if endpoint == "count_tokens":
            from anthropic.types import message_count_tokens_params as mod

            names = set(mod.MessageCountTokensParams.__annotations__)
        else:
            from anthropic.types import message_create_params as mod  # type: ignore[no-redef]

            names = set(mod.MessageCreateParamsBase.__annotations__) | {"stream"}  # type: ignore[attr-defined]
        if beta:
            from anthropic.types.beta import message_create_params as beta_mod

            names |= set(beta_mod.MessageCreateParamsBase.__annotations__)
        names.discard("betas")  # a header in the SDK, never a body field
        return frozenset(names)
    except (ImportError, AttributeError):
        fallback = set(_FALLBACK_PARAMS)
        if endpoint == "count_tokens":
            fallback -= {"max_tokens", "stream", "metadata", "stop_sequences", "service_tier"}
        return frozenset(fallback)


@cache
def typed_tools() -> dict[str, str | None]:
    """Anthropic-defined tool `type` -> the `name` it must carry (None: any name)."""
    try:
        from anthropic.types.tool_union_param import ToolUnionParam

        found: dict[str, str | None] = {}
        for member in typing.get_args(ToolUnionParam):
            hints = typing.get_type_hints(member, include_extras=True)
            names = _literals(hints.get("name"))
            for tool_type in _literals(hints.get("type")):
                if tool_type != "custom":
                    found[tool_type] = names[0] if names else None
        return found or dict(_FALLBACK_TYPED_TOOLS)
    except (ImportError, AttributeError, TypeError, NameError):
        return dict(_FALLBACK_TYPED_TOOLS)


@cache
def content_block_types() -> frozenset[str]:
    """Block `type`s a request message may contain."""
    try:
        from anthropic.types.content_block_param import ContentBlockParam

        found: set[str] = set()
        for member in typing.get_args(ContentBlockParam):
            hints = typing.get_type_hints(member, include_extras=True)
            found.update(_literals(hints.get("type")))
        return frozenset(found) or _FALLBACK_BLOCK_TYPES
    except (ImportError, AttributeError, TypeError, NameError):
        return _FALLBACK_BLOCK_TYPES
