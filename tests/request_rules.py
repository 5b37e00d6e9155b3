"""A request checked strictly against the installed SDK's own request types, plus the API's
rules the types do not encode.

`check_request` walks the request against `MessageCreateParams` (or its beta variant, or
`MessageCountTokensParams`): every TypedDict refuses a key it does not declare and wants its
required ones, every list is walked item by item (the types say `Iterable`, which a
validator would accept lazily and never look into), unions pass when one member does, and
the response models that the SDK's unions also accept do not count: a request must be made of
request shapes. The pydantic validation the SDK's types allow is run as well, with its lazy
iterators drained.
"""

from __future__ import annotations

import collections.abc
import functools
import types
import typing
from typing import Any

import typing_extensions
from anthropic.types import message_count_tokens_params, message_create_params
from anthropic.types.beta import message_create_params as beta_message_create_params
from pydantic import BaseModel, ConfigDict

MAX_CACHE_BREAKPOINTS = 4
ANSWER_HEADROOM = 1024
_LISTS = {list, tuple, collections.abc.Iterable, collections.abc.Sequence, collections.abc.Collection}


def _is_typeddict(kind: Any) -> bool:
    return typing_extensions.is_typeddict(kind) or typing.is_typeddict(kind)


def _problems(value: Any, kind: Any, where: str) -> list[str]:
    """Why `value` is not a `kind` (an annotation of the SDK's request types); [] when it is."""
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if kind is Any or kind is object:
        return []
    if origin is typing.Annotated:
        return _problems(value, args[0], where)
    if origin in (typing.Union, types.UnionType):
        tried = [_problems(value, member, where) for member in args]
        return [] if any(not found for found in tried) else min(tried, key=len)
    if origin in (typing.Literal, typing_extensions.Literal):
        return [] if value in args else [f"{where}: {value!r} is not one of {args}"]
    if kind is type(None):
        return [] if value is None else [f"{where}: not null"]
    if _is_typeddict(kind):
        return _typeddict_problems(value, kind, where)
    if isinstance(kind, type) and issubclass(kind, BaseModel):
        return [f"{where}: a response shape ({kind.__name__}), not a request shape"]
    if origin in _LISTS or getattr(kind, "__name__", "") == "SequenceNotStr" or (
        origin is not None and getattr(origin, "__name__", "") == "SequenceNotStr"
    ):
        if isinstance(value, (str, bytes, dict)) or not isinstance(value, (list, tuple)):
            return [f"{where}: not a list"]
        item = args[0] if args else Any
        return [problem for i, entry in enumerate(value) for problem in _problems(entry, item, f"{where}.{i}")]
    if origin in (dict, collections.abc.Mapping) or kind is dict:
        if not isinstance(value, dict):
            return [f"{where}: not an object"]
        inner = args[1] if len(args) == 2 else Any
        return [problem for key, entry in value.items() for problem in _problems(entry, inner, f"{where}.{key}")]
    return _scalar_problems(value, kind, where)


def _scalar_problems(value: Any, kind: Any, where: str) -> list[str]:
    if kind is bool:
        return [] if isinstance(value, bool) else [f"{where}: not a boolean"]
    if kind is int:
        return [] if isinstance(value, int) and not isinstance(value, bool) else [f"{where}: not an integer"]
    if kind is float:
        return [] if isinstance(value, (int, float)) and not isinstance(value, bool) else [f"{where}: not a number"]
    if kind is str:
        return [] if isinstance(value, str) else [f"{where}: not a string"]
    if isinstance(kind, type):
        return [] if isinstance(value, kind) else [f"{where}: not a {kind.__name__}"]
    return []  # a type the walker does not know: pydantic's validation covers it


def _typeddict_problems(value: Any, kind: Any, where: str) -> list[str]:
    if not isinstance(value, dict):
        return [f"{where}: not an object ({kind.__name__})"]
    hints = _hints(kind)
    extra = sorted(set(value) - set(hints))
    if extra:
        return [f"{where}.{extra[0]}: not a key of {kind.__name__}"]
    missing = sorted(set(kind.__required_keys__) - set(value))
    if missing:
        return [f"{where}.{missing[0]}: required by {kind.__name__}"]
    return [problem for key, entry in value.items() for problem in _problems(entry, hints[key], f"{where}.{key}")]


@functools.cache
def _hints(kind: Any) -> dict[str, Any]:
    return typing.get_type_hints(kind)


def _drained(value: Any) -> Any:
    """A validated value with every lazy iterator pydantic left in it read to its end."""
    if isinstance(value, dict):
        return {key: _drained(entry) for key, entry in value.items()}
    if isinstance(value, (list, tuple)):
        return [_drained(entry) for entry in value]
    if isinstance(value, (str, bytes, BaseModel)) or value is None:
        return value
    if isinstance(value, collections.abc.Iterator):
        return [_drained(entry) for entry in value]
    return value


def params_type(endpoint: str, beta: bool, streamed: bool) -> Any:
    """The SDK's TypedDict for a request to `endpoint` (``messages`` or ``count_tokens``)."""
    if endpoint == "count_tokens":
        return message_count_tokens_params.MessageCountTokensParams
    module = beta_message_create_params if beta else message_create_params
    return module.MessageCreateParamsStreaming if streamed else module.MessageCreateParamsNonStreaming


def check_request(body: dict[str, Any], *, endpoint: str = "messages", beta: bool = False) -> list[str]:
    """Every problem of `body` under the SDK's request types and the API's own rules."""
    kind = params_type(endpoint, beta, streamed=bool(body.get("stream")))
    problems = _problems(body, kind, "request")
    try:
        _drained(_strict_model(kind).model_validate({"request": body}).request)
    except Exception as err:  # pydantic's ValidationError, or one raised while draining
        problems.append(f"pydantic: {str(err).splitlines()[0:3]}")
    return problems + api_rule_problems(body)


@functools.cache
def _strict_model(kind: Any) -> type[BaseModel]:
    """A model holding one `kind`, built once per type: building its schema is most of a check's time."""

    class Strict(BaseModel):
        model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
        request: kind  # type: ignore[valid-type]

    return Strict


def api_rule_problems(body: dict[str, Any]) -> list[str]:
    """The API's rules that its types do not say: no empty text block, thinking's budget below
    max_tokens with room for the answer, each tool_use answered in the next user turn and each
    tool_result answering one, at most four cache breakpoints."""
    problems = []
    messages = body.get("messages") or []
    system = body.get("system") if isinstance(body.get("system"), list) else []
    for where, block in _blocks(messages, system):
        if block.get("type") == "text" and not block.get("text"):
            problems.append(f"{where}: empty text block")
    thinking = body.get("thinking")
    if isinstance(thinking, dict) and thinking.get("type") == "enabled":
        budget, most = thinking.get("budget_tokens", 0), body.get("max_tokens", 0)
        if not 1024 <= budget <= most - ANSWER_HEADROOM:
            problems.append(f"thinking: budget {budget} leaves under {ANSWER_HEADROOM} of max_tokens {most}")
    problems += _pairing_problems(messages)
    marks = sum(1 for _, block in _blocks(messages, system, body.get("tools") or []) if "cache_control" in block)
    if marks > MAX_CACHE_BREAKPOINTS:
        problems.append(f"{marks} cache breakpoints")
    return problems


def _blocks(messages: list[Any], *more: list[Any]) -> list[tuple[str, dict[str, Any]]]:
    found = []
    for i, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        for j, block in enumerate(content if isinstance(content, list) else []):
            found.append((f"messages.{i}.content.{j}", block))
            inner = block.get("content") if isinstance(block, dict) else None
            for k, part in enumerate(inner if isinstance(inner, list) else []):
                found.append((f"messages.{i}.content.{j}.content.{k}", part))
    for n, extra in enumerate(more):
        found += [(f"extra.{n}.{j}", block) for j, block in enumerate(extra) if isinstance(block, dict)]
    return [(where, block) for where, block in found if isinstance(block, dict)]


def _pairing_problems(messages: list[Any]) -> list[str]:
    problems = []
    for i, message in enumerate(messages):
        content = message.get("content") if isinstance(message.get("content"), list) else []
        results = {b.get("tool_use_id") for b in content if b.get("type") == "tool_result"}
        if message.get("role") != "user" or not results:
            continue
        before = messages[i - 1] if i else {}
        asked = {b.get("id") for b in before.get("content") or [] if isinstance(b, dict) and b.get("type") == "tool_use"}
        if before.get("role") != "assistant" or results - asked:
            problems.append(f"messages.{i}: a tool_result answers no tool_use of the message before it")
    for i, message in enumerate(messages[:-1]):
        content = message.get("content") if isinstance(message.get("content"), list) else []
        asked = {b.get("id") for b in content if b.get("type") == "tool_use"}
        after = messages[i + 1].get("content")
        answered = {b.get("tool_use_id") for b in after if isinstance(b, dict)} if isinstance(after, list) else set()
        if message.get("role") == "assistant" and asked - answered:
            problems.append(f"messages.{i}: a tool_use is not answered in the next message")
    return problems
