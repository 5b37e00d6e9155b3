"""Validation of ``tools``, ``tool_choice`` and the pairing of ``tool_use`` with ``tool_result``.

Part of `validation`, with the same rules: the API's wording, the field named by its path.
"""

from __future__ import annotations

import re
from typing import Any

from fake_messages_api.api_errors import invalid_request
from fake_messages_api.request_validation import sdk_facts

_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")


def check_tools(tools: Any) -> set[str]:
    """Validate ``tools``; return the tool names it defines."""
    if tools is None:
        return set()
    if not isinstance(tools, list):
        raise invalid_request("tools: Input should be a valid list")
    typed = sdk_facts.typed_tools()
    names: list[str] = []
    for i, tool in enumerate(tools):
        where = f"tools.{i}"
        if not isinstance(tool, dict):
            raise invalid_request(f"{where}: Input should be a valid dictionary")
        tool_type = tool.get("type", "custom")
        if tool_type in (None, "custom"):
            _check_custom_tool(tool, where)
        elif tool_type in typed:
            expected = typed[tool_type]
            if expected is not None and tool.get("name") != expected:
                raise invalid_request(f"{where}.{tool_type}.name: Input should be '{expected}'")
        else:
            raise invalid_request(
                f"{where}: Input tag '{tool_type}' found using 'type' does not match any of the "
                f"expected tags: 'custom', " + ", ".join(f"'{t}'" for t in sorted(typed))
            )
        if isinstance(tool.get("name"), str):
            names.append(tool["name"])
    if len(names) != len(set(names)):
        raise invalid_request("tools: Tool names must be unique.")
    return set(names)


def _check_custom_tool(tool: dict[str, Any], where: str) -> None:
    name = tool.get("name")
    if name is None:
        raise invalid_request(f"{where}.custom.name: Field required")
    if not isinstance(name, str) or not _TOOL_NAME.match(name):
        raise invalid_request(
            f"{where}.custom.name: String should match pattern '{_TOOL_NAME.pattern}'"
        )
    schema = tool.get("input_schema")
    if schema is None:
        raise invalid_request(f"{where}.custom.input_schema: Field required")
    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise invalid_request(
            f"{where}.custom.input_schema.type: Input should be 'object'"
        )



def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message["content"]
    return content if isinstance(content, list) else []


def check_tool_pairing(messages: list[dict[str, Any]], has_tools: bool) -> None:
    """Every tool_use answered in the very next user message, every tool_result expected."""
    uses_tools = any(
        block.get("type") in ("tool_use", "tool_result") for m in messages for block in _blocks(m)
    )
    if uses_tools and not has_tools:
        raise invalid_request(
            "Requests which include `tool_use` or `tool_result` blocks must define tools."
        )
    for i, message in enumerate(messages):
        blocks = _blocks(message)
        if message["role"] == "user":
            _check_results_of(messages, i, blocks)
        else:
            use_ids = [b["id"] for b in blocks if b.get("type") == "tool_use"]
            if len(use_ids) != len(set(use_ids)):
                raise invalid_request(f"messages.{i}: `tool_use` ids must be unique")
            if not use_ids:
                continue
            following = messages[i + 1] if i + 1 < len(messages) else None
            answered = set()
            if following is not None and following["role"] == "user":
                answered = {
                    b.get("tool_use_id") for b in _blocks(following) if b.get("type") == "tool_result"
                }
            missing = [u for u in use_ids if u not in answered]
            if missing:
                raise invalid_request(
                    f"messages.{i}: `tool_use` ids were found without `tool_result` blocks "
                    f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
                    "corresponding `tool_result` block in the next message."
                )


def _check_results_of(messages: list[dict[str, Any]], i: int, blocks: list[dict[str, Any]]) -> None:
    previous = messages[i - 1] if i > 0 else None
    offered = set()
    if previous is not None and previous["role"] == "assistant":
        offered = {b.get("id") for b in _blocks(previous) if b.get("type") == "tool_use"}
    seen_other = False
    for j, block in enumerate(blocks):
        if block.get("type") != "tool_result":
            seen_other = True
            continue
        if block.get("tool_use_id") not in offered:
            raise invalid_request(
                f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` "
                f"blocks: {block.get('tool_use_id')}. Each `tool_result` block must have a "
                "corresponding `tool_use` block in the previous message."
            )
        if seen_other:
            raise invalid_request(
                f"messages.{i}.content.{j}: `tool_result` blocks must come first in the content "
                "of a user message, before any other block."
            )


def check_tool_choice(choice: Any, tool_names: set[str]) -> None:
    if choice is None:
        return
    if not isinstance(choice, dict) or choice.get("type") not in ("auto", "any", "tool", "none"):
        raise invalid_request(
            "tool_choice: Input tag found using 'type' does not match 'auto', 'any', 'tool', 'none'"
        )
    if choice["type"] == "tool" and choice.get("name") not in tool_names:
        raise invalid_request(f"tool_choice.tool.name: tool '{choice.get('name')}' is not in tools")
