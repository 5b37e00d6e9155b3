"""Structured-output requests (the Context Agent's summarizer) and their default answer.

A request with ``output_config.format = {"type": "json_schema", "schema": ...}`` asks the
model for JSON matching the schema; the API returns it as the text of a single text block.
The fake routes such requests to a summarizer callable. The default one answers the smallest
value the schema accepts, so any caller that validates the answer against its own pydantic
model gets something valid without the test having to script it.
"""

from __future__ import annotations

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
    """The smallest answer valid for the request's schema."""
    schema = output_schema(request) or {"type": "object"}
    answer: dict[str, Any] | str = minimal_instance(schema)
    return answer


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
