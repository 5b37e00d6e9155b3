"""Structured-output requests (the Context Agent's summarizer) and their default answer.

A request with ``output_config.format = {"type": "json_schema", "schema": ...}`` asks the
model for JSON matching the schema; the API returns it as the text of a single text block.
The fake routes such requests to a summarizer callable. The default one answers the smallest
value the schema accepts, so any caller that validates the answer against its own pydantic
model gets something valid without the test having to script it, and a short running summary
in its `summary` (an empty one is refused by the Context Agent: ask for `empty_summarizer`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

Summarizer = Callable[[dict[str, Any]], dict[str, Any] | str]


def output_schema(request: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON schema a request asks its answer to follow, or None for a plain request."""
    config = request.get("output_config")
    if not isinstance(config, dict):
        return None
    fmt = config.get("format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema" and isinstance(fmt.get("schema"), dict):
        schema: dict[str, Any] = fmt["schema"]
        return schema
    return None


def is_summarizer_request(request: dict[str, Any]) -> bool:
    """True for structured-output requests, which the fake hands to its summarizer."""
    return output_schema(request) is not None


def default_summarizer(request: dict[str, Any]) -> dict[str, Any] | str:
    """The smallest answer valid for the request's schema, with a plausible running summary
    where it asks for one (`plausible_summary`); `empty_summarizer` leaves it empty."""
    answer = empty_summarizer(request)
    if isinstance(answer, dict) and isinstance(answer.get("summary"), str):
        answer["summary"] = plausible_summary(request)
    return answer


def empty_summarizer(request: dict[str, Any]) -> dict[str, Any] | str:
    """The smallest answer valid for the request's schema: an empty summary, which the
    Context Agent refuses (it keeps the previous one, with a warning)."""
    schema = output_schema(request) or {"type": "object"}
    answer: dict[str, Any] | str = minimal_instance(schema)
    return answer


_COUNT = re.compile(r"(\d+) feature\(s\) summarized so far")
_LATEST = 10  # ids named in the summary: it stays a line long, whatever the run's length


def plausible_summary(request: dict[str, Any]) -> str:
    """A running summary a model could have written, from the Context Agent's request: how many
    features are summarized so far (the previous summary's count plus the new ones), and the
    latest of them with their status, e.g. "3 feature(s) summarized so far; latest: feat-03
    (Feature 3) passed." """
    text = _user_text(request)
    previous = _COUNT.search(_section(text, "## Previous summary"))
    features = []
    for line in _section(text, "## Features since the last summary").splitlines():
        try:
            log = json.loads(line)
        except ValueError:
            continue
        if isinstance(log, dict) and log.get("id"):
            features.append(f"{log['id']} ({log.get('name') or log['id']}) {log.get('status', 'done')}")
    done = (int(previous.group(1)) if previous else 0) + len(features)
    latest = "; latest: " + ", ".join(features[-_LATEST:]) if features else ""
    return f"{done} feature(s) summarized so far{latest}."


def _user_text(request: dict[str, Any]) -> str:
    parts = []
    for message in request.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts += [block.get("text", "") for block in content if isinstance(block, dict)]
    return "\n".join(part for part in parts if isinstance(part, str))


def _section(text: str, heading: str) -> str:
    """The lines under `heading` (a "## " heading) up to the next one."""
    start = text.find(heading)
    if start < 0:
        return ""
    body = text[start:].split("\n", 1)[1] if "\n" in text[start:] else ""
    end = body.find("\n## ")
    return body if end < 0 else body[:end]


def _resolve(ref: str, root: dict[str, Any]) -> dict[str, Any]:
    node: Any = root
    for part in ref.lstrip("#/").split("/"):
        if part:
            node = node[part.replace("~1", "/").replace("~0", "~")]
    resolved: dict[str, Any] = node
    return resolved


def minimal_instance(schema: dict[str, Any], root: dict[str, Any] | None = None, depth: int = 0) -> Any:
    """A small value that `schema` accepts: empty strings and lists, zeros, false, first choices."""
    root = root if root is not None else schema
    if depth > 32:  # a recursive schema: stop with the emptiest thing
        return None
    if "$ref" in schema:
        return minimal_instance(_resolve(schema["$ref"], root), root, depth + 1)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    for combinator in ("anyOf", "oneOf"):
        options = schema.get(combinator)
        if options:
            # Prefer a non-null option so that required content is present.
            chosen = next((o for o in options if o.get("type") != "null"), options[0])
            return minimal_instance(chosen, root, depth + 1)
    if schema.get("allOf"):
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            merged.update(_resolve(part["$ref"], root) if "$ref" in part else part)
        return minimal_instance(merged, root, depth + 1)

    schema_type = schema.get("type")
    if isinstance(schema_type, list):
        schema_type = next((t for t in schema_type if t != "null"), "null")
    if schema_type is None:
        schema_type = "object" if "properties" in schema else "string"

    if schema_type == "object":
        properties = schema.get("properties", {})
        return {name: minimal_instance(sub, root, depth + 1) for name, sub in properties.items()}
    if schema_type == "array":
        items = schema.get("items", {})
        return [minimal_instance(items, root, depth + 1) for _ in range(schema.get("minItems", 0))]
    if schema_type == "string":
        return "x" * int(schema.get("minLength", 0))
    if schema_type == "integer":
        return int(schema.get("minimum", 0))
    if schema_type == "number":
        return schema.get("minimum", 0)
    if schema_type == "boolean":
        return False
    return None
