"""Running one tool call from the model: route it, contain every failure, cap and redact the text."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from orchestrator.tools import bash, editor, report
from orchestrator.tools.context import ToolContext, ToolError, ToolInputError, ToolResult
from orchestrator.tools.truncation import elide_middle, head_of

Handler = Callable[[dict[str, Any], ToolContext], ToolResult]


def _validate_report(tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
    # The agent loop acts on report_feature itself; here it is only checked.
    report.parse_report(tool_input)
    return ToolResult("Report is valid.")


_HANDLERS: dict[str, Handler] = {
    bash.TOOL_NAME: bash.run_bash,
    editor.TOOL_NAME: editor.run_editor,
    report.TOOL_NAME: _validate_report,
}

_VIEW_HINT = "use view_range to see a part"


def execute_tool(name: str, tool_input: object, ctx: ToolContext) -> ToolResult:
    """Run tool `name` with the model's `tool_input`; never raises for anything the model sends.

    Failures come back as `is_error=True` results with a short message the model can act on.
    Output is capped at `ctx.output_cap` characters and secrets are redacted. Only
    KeyboardInterrupt/SystemExit propagate (after bash has stopped its processes).
    """
    try:
        handler = _HANDLERS.get(name) if isinstance(name, str) else None
        if handler is None:
            raise ToolInputError(f"unknown tool {str(name)[:80]!r}; the tools are: {', '.join(_HANDLERS)}")
        if not isinstance(tool_input, dict):
            raise ToolInputError(f"{name} input must be a JSON object, got {type(tool_input).__name__}")
        result = handler(tool_input, ctx)
    except ToolError as err:
        result = ToolResult(str(err), is_error=True)
    except RecursionError:
        result = ToolResult(f"{name} failed: the input is nested too deeply", is_error=True)
    except Exception as err:
        result = ToolResult(f"{name} failed unexpectedly: {_one_line(err)}", is_error=True)
    hint = _VIEW_HINT if name == editor.TOOL_NAME else ""
    # Redacted before it is cut (`elide_middle` does both), never after: a key across the cut
    # would otherwise reach the model as two fragments that no longer look like the key.
    return ToolResult(elide_middle(result.content, ctx.output_cap, hint=hint), result.is_error)


def _one_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()[0] if str(err).strip() else ""
    text = head_of(text, 300)
    return f"{type(err).__name__}: {text}" if text else type(err).__name__
