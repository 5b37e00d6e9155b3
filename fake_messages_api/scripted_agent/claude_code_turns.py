"""The scripted agent speaking Claude Code: a plan's steps as Claude Code's own tool calls.

Plans are written once, in the built-in agent's tools (the text editor, ``bash``,
``report_feature``). When a request offers Claude Code's tools instead (the bundled CLI sends
``Write``, ``Edit``, ``Read``, ``Bash``...), each step is said the way Claude Code understands it:

- the editor's ``create`` becomes ``Read`` then ``Write`` of the absolute path, in one reply:
  Claude Code refuses to overwrite a file it has not read in the session, and the model cannot
  know whether the file exists (reading a missing file is a harmless error result);
- ``str_replace`` becomes ``Read`` then ``Edit``; ``view`` becomes ``Read``;
- ``bash`` becomes ``Bash``; ``report_feature`` becomes ``mcp__orchestrate__report_feature``, the
  orchestrator's in-process MCP tool (server ``orchestrate``), with the same input.

Relative paths are made absolute against the working directory Claude Code states in its
prompt (``Primary working directory: ...``), as a model reading that prompt would. Step
numbers do not change: the extra ``Read`` rides in the same reply as the call it prepares.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from typing import Any

from fake_messages_api.api_errors import new_id

Block = dict[str, Any]

CLAUDE_CODE_CORE_TOOLS = frozenset({"Bash", "Read", "Write"})
REPORT_TOOL = "mcp__orchestrate__report_feature"
_BUILTIN_EDITOR = "str_replace_based_edit_tool"
_WORKING_DIRECTORY = re.compile(r"Primary working directory: *(\S[^\n]*)")


def speaks_claude_code(request: dict[str, Any]) -> bool:
    """True when `request` offers Claude Code's tools (and so expects calls to them)."""
    tools = request.get("tools")
    names = {t.get("name") for t in tools if isinstance(t, dict)} if isinstance(tools, list) else set()
    return names >= CLAUDE_CODE_CORE_TOOLS


def working_directory(request: dict[str, Any]) -> str | None:
    """The directory Claude Code says it works in, from its system prompt or first messages."""
    for text in _prompt_texts(request):
        match = _WORKING_DIRECTORY.search(text)
        if match:
            return match.group(1).strip()
    return None


def spoken(blocks: list[Block], request: dict[str, Any]) -> list[Block]:
    """`blocks` as Claude Code's calls when `request` speaks Claude Code; else unchanged."""
    if not speaks_claude_code(request):
        return blocks
    cwd = working_directory(request)
    said: list[Block] = []
    for block in blocks:
        said.extend(as_claude_code(block, cwd))
    return said


def as_claude_code(block: Block, cwd: str | None) -> list[Block]:
    """One built-in block as the Claude Code blocks that do the same (text passes unchanged)."""
    if block.get("type") != "tool_use":
        return [block]
    name, given = block.get("name"), block.get("input") or {}
    if name == "bash" and "command" in given:
        return [_call(block, "Bash", {"command": given["command"]})]
    if name == "report_feature":
        return [_call(block, REPORT_TOOL, given)]
    if name != _BUILTIN_EDITOR:
        return [block]
    path = _absolute(str(given.get("path", "")), cwd)
    command = given.get("command")
    if command == "create":
        return [_read(path), _call(block, "Write", {"file_path": path, "content": given.get("file_text", "")})]
    if command == "str_replace":
        edit = {"file_path": path, "old_string": given.get("old_str", ""), "new_string": given.get("new_str", "")}
        return [_read(path), _call(block, "Edit", edit)]
    if command == "view":
        return [_call(block, "Read", {"file_path": path})]
    return [block]  # no Claude Code equivalent: the CLI answers it with an error, as for any unknown tool


def _call(block: Block, name: str, input: dict[str, Any]) -> Block:
    # Keeps the block's id and any fake-only keys (``_cut_at``) the reply builder reads.
    return {**block, "name": name, "input": dict(input)}


def _read(path: str) -> Block:
    return {"type": "tool_use", "id": new_id("toolu"), "name": "Read", "input": {"file_path": path}}


def _absolute(path: str, cwd: str | None) -> str:
    if posixpath.isabs(path) or cwd is None:
        return path
    return posixpath.normpath(posixpath.join(cwd, path))


def _prompt_texts(request: dict[str, Any]) -> Iterator[str]:
    system = request.get("system")
    if isinstance(system, str):
        yield system
    elif isinstance(system, list):
        yield from (b.get("text", "") for b in system if isinstance(b, dict))
    for message in request.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            yield content
        elif isinstance(content, list):
            yield from (b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
