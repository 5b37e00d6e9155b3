"""Running one tool call from the model: route it, contain every failure, cap and redact the text."""

from __future__ import annotations

from orchestrator.tools.context import ToolContext, ToolError, ToolInputError, ToolResult
from orchestrator.tools.registry import find_tool, tool_names
from orchestrator.tools.truncation import elide_middle, head_of


def execute_tool(name: str, tool_input: object, ctx: ToolContext) -> ToolResult:
    """Run tool `name` with the model's `tool_input`; never raises for anything the model sends.

    Failures come back as `is_error=True` results with a short message the model can act on.
    Output is capped at `ctx.output_cap` characters and secrets are redacted. Only
    KeyboardInterrupt/SystemExit propagate (after bash has stopped its processes).
    """
    tool = find_tool(name)
    try:
        if tool is None:
            raise ToolInputError(f"unknown tool {str(name)[:80]!r}; the tools are: {', '.join(tool_names())}")
        if not isinstance(tool_input, dict):
            raise ToolInputError(f"{name} input must be a JSON object, got {type(tool_input).__name__}")
        result = tool.handler(tool_input, ctx)
    except ToolError as err:
        result = ToolResult(str(err), is_error=True)
    except RecursionError:
        result = ToolResult(f"{name} failed: the input is nested too deeply", is_error=True)
    except Exception as err:
        result = ToolResult(f"{name} failed unexpectedly: {_one_line(err)}", is_error=True)
    hint = tool.elision_hint if tool is not None else ""
    # Redacted before it is cut (`elide_middle` does both), never after: a key across the cut
    # would otherwise reach the model as two fragments that no longer look like the key.
    return ToolResult(elide_middle(result.content, ctx.output_cap, hint=hint), result.is_error)


def _one_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()[0] if str(err).strip() else ""
    text = head_of(text, 300)
    return f"{type(err).__name__}: {text}" if text else type(err).__name__
