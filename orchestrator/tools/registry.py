"""The agent's tools by name: adding a tool is one module that defines a `Tool`, plus one line here.

The order of `TOOLS` is the order of the definitions sent with every request; it never
changes between calls, so the tool block stays in the prompt cache.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.tools import bash, editor, report
from orchestrator.tools.context import Tool
from orchestrator.tools.truncation import head_of

if TYPE_CHECKING:  # the SDK takes seconds to import; its types are for the checker only
    from anthropic.types import ToolUnionParam

TOOLS: tuple[Tool, ...] = (bash.TOOL, editor.TOOL, report.TOOL)
_BY_NAME = {tool.name: tool for tool in TOOLS}
SUMMARY_CHARS = 200


def find_tool(name: object) -> Tool | None:
    """The tool called `name`, or None for a name no tool has (or that is not a string)."""
    return _BY_NAME.get(name) if isinstance(name, str) else None


def tool_names() -> list[str]:
    """The names of every tool, in the order they are sent."""
    return [tool.name for tool in TOOLS]


def tool_definitions() -> list[ToolUnionParam]:
    """A fresh list of every tool's definition (bash, the text editor, report_feature)."""
    return [tool.definition() for tool in TOOLS]


def summarize_input(name: object, tool_input: object) -> str:
    """A short, redacted line saying what a call does, for the event log; "" if there is nothing to say."""
    tool = find_tool(name)
    if tool is None or not isinstance(tool_input, dict):
        return ""
    # Redacted before the cut (`head_of`): a key cut at the limit would pass redaction.
    return head_of(tool.summary(tool_input), SUMMARY_CHARS)
