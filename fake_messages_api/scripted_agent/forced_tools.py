"""Forced tool-use requests (``tool_choice: {"type": "tool", "name": ...}``) and their answers.

A structured-output call can also be made by offering one custom tool whose ``input_schema`` is
the answer's schema and forcing the model to call it; the answer is then the ``input`` of a
single ``tool_use`` block. `orchestrate plan` works this way. The fake routes such requests to
``fake.tool_answers``, a callable ``(tool_name, request_json) -> dict``; the default answers
the smallest value the tool's schema accepts. `ScriptedToolAnswers` plays answers in order,
per tool name, for tests that script a conversation (an invalid answer, then its repair).
"""

from __future__ import annotations

import json
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from fake_messages_api.scripted_agent.conflicts import CONFLICT_TOOL, keep_both_sides
from fake_messages_api.scripted_agent.summarizer import minimal_instance

ToolAnswer = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]
ToolAnswerer = Callable[[str, dict[str, Any]], dict[str, Any]]


def forced_tool_name(request: dict[str, Any]) -> str | None:
    """The tool a request forces the model to call, or None when it forces none."""
    choice = request.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "tool" and isinstance(choice.get("name"), str):
        return str(choice["name"])
    return None


def tool_schema(request: dict[str, Any], name: str) -> dict[str, Any]:
    """The ``input_schema`` of the tool called `name` in `request` (an empty object schema if absent)."""
    for tool in request.get("tools") or []:
        if isinstance(tool, dict) and tool.get("name") == name and isinstance(tool.get("input_schema"), dict):
            return dict(tool["input_schema"])
    return {"type": "object"}


def default_tool_answer(name: str, request: dict[str, Any]) -> dict[str, Any]:
    """The smallest input the forced tool's schema accepts (orchestrate's merge-conflict step:
    both sides kept, `conflicts.keep_both_sides`)."""
    if name == CONFLICT_TOOL:
        return keep_both_sides(request_text(request))
    value = minimal_instance(tool_schema(request, name))
    return value if isinstance(value, dict) else {}


class ScriptedToolAnswers:
    """Answers per tool name, played in order; past the end, `fallback` answers.

    Each answer is a dict (the tool input) or a callable ``(request_json) -> dict``, which
    can read the prompt to decide (which feature a check is asked for, say).
    """

    def __init__(
        self, answers: Mapping[str, Iterable[ToolAnswer]], fallback: ToolAnswerer = default_tool_answer
    ) -> None:
        self.queues: dict[str, deque[ToolAnswer]] = defaultdict(deque)
        for name, items in answers.items():
            self.queues[name].extend(items)
        self.fallback = fallback
        self.asked: list[str] = []

    def __call__(self, name: str, request: dict[str, Any]) -> dict[str, Any]:
        self.asked.append(name)
        queue = self.queues.get(name)
        if not queue:
            return self.fallback(name, request)
        answer = queue.popleft()
        return answer(request) if callable(answer) else dict(answer)


def load_tool_answers(path: str | Path) -> ScriptedToolAnswers:
    """Scripted answers from a JSON file: ``{tool_name: [input, ...]}``, played in order per tool."""
    data = json.loads(Path(path).read_text("utf-8"))
    if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
        raise ValueError("a tool-answers file holds a JSON object: {tool_name: [input, ...]}")
    return ScriptedToolAnswers(data)


def request_text(request: dict[str, Any]) -> str:
    """Every text block of the request's messages, joined: what a scripted answer may read."""
    texts: list[str] = []
    for message in request.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            texts.append(content)
            continue
        for block in content or []:
            if isinstance(block, dict) and block.get("type") == "text":
                texts.append(str(block.get("text", "")))
            elif isinstance(block, dict) and block.get("type") == "tool_result":
                inner = block.get("content")
                texts.append(inner if isinstance(inner, str) else str(inner))
    return "\n".join(texts)
