"""The `report_feature` tool: the agent's account of what it did, and its input schema.

The agent loop handles the call itself (it ends the attempt); this module only defines the
shape and turns raw tool input into a `FeatureReport` or a message the model can act on.
Decisions and constraints feed the Context Agent, so they are kept short and plain.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import ErrorDetails

from orchestrator.json_types import JsonObject, ToolInput
from orchestrator.tools.context import Tool, ToolContext, ToolInputError, ToolResult

if TYPE_CHECKING:  # the SDK takes seconds to import; its types are for the checker only
    from anthropic.types import ToolParam

TOOL_NAME = "report_feature"
MAX_SUMMARY = 4000
MAX_ITEM = 2000
MAX_ITEMS = 50
MAX_NOTES = 8000
MAX_EVIDENCE = 2000
# What the agent hears when its report is accepted (the built-in loop and Claude Code alike).
REPORT_RECEIVED = "Report received. The orchestrator will now run the feature's check."



class DefectiveCheck(BaseModel):
    """The agent's claim that the feature's check itself is wrong, with where and why.

    Used, it stops the feature's retries: the feature needs a person to review its check."""

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    file: str = Field(min_length=1, max_length=500)
    """The check file (relative to the project), or the verify command when the command is wrong."""
    line: int | None = Field(None, ge=1)
    """The line of the wrong expectation, when there is one."""
    evidence: str = Field(min_length=1, max_length=MAX_EVIDENCE)
    """Why the check is wrong: what it expects, what is right, and how that was derived."""

    def where(self) -> str:
        """`file:line`, or the file alone."""
        return f"{self.file}:{self.line}" if self.line else self.file


class FeatureReport(BaseModel):
    """What the agent says it did for one feature."""

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    summary: str = Field(min_length=1, max_length=MAX_SUMMARY)
    """What was built or changed, in a few sentences."""
    decisions: list[str] = Field(default_factory=list, max_length=MAX_ITEMS)
    """Design decisions later features should follow (names, layouts, libraries, conventions)."""
    constraints: list[str] = Field(default_factory=list, max_length=MAX_ITEMS)
    """Rules later features must respect (invariants, compatibility, limits)."""
    notes: str = Field("", max_length=MAX_NOTES)
    """Anything else worth knowing: open issues, follow-ups, caveats."""
    prevention: str = Field("", max_length=MAX_ITEM, exclude_if=lambda value: not value)
    """After a failed attempt: what caused the failure and how to avoid it, for later features."""
    defective_check: DefectiveCheck | None = Field(None, exclude_if=lambda value: value is None)
    """Set only when the check itself is wrong: the feature then waits for a person, not another attempt."""

    @field_validator("decisions", "constraints", mode="before")
    @classmethod
    def _as_list(cls, value: Any) -> Any:
        # Models sometimes send one string or null instead of a list; the meaning is clear.
        if value is None:
            return []
        if isinstance(value, str):
            return [value]
        return value

    @field_validator("decisions", "constraints")
    @classmethod
    def _non_empty_items(cls, value: list[str]) -> list[str]:
        items = [item.strip() for item in value if item.strip()]
        for item in items:
            if len(item) > MAX_ITEM:
                raise ValueError(f"each item must be at most {MAX_ITEM} characters")
        return items

    @field_validator("notes", "prevention", mode="before")
    @classmethod
    def _notes_default(cls, value: Any) -> Any:
        return "" if value is None else value


def parse_report(tool_input: object) -> FeatureReport:
    """The report in `tool_input`; ToolInputError saying what to fix if it does not fit the schema."""
    if not isinstance(tool_input, dict):
        raise ToolInputError("report_feature input must be an object with summary, decisions, constraints, notes")
    try:
        return FeatureReport.model_validate(tool_input)
    except ValidationError as err:
        problems = []
        for error in err.errors()[:5]:
            where = ".".join(str(part) for part in error["loc"]) or "input"
            problems.append(f"{where}: {_message(error)}")
        raise ToolInputError("report_feature input is invalid: " + "; ".join(problems)) from None


def _message(error: ErrorDetails) -> str:
    kind = error["type"]
    if kind == "missing":
        return "required"
    if kind in ("string_type", "list_type"):
        return "must be a " + ("string" if kind == "string_type" else "list of strings")
    if kind == "string_too_short":
        return "must not be empty"
    return error["msg"].removeprefix("Value error, ")


def report_tool_definition() -> ToolParam:
    """The custom tool the model calls when it has finished a feature."""
    text_list = {"type": "array", "items": {"type": "string", "maxLength": MAX_ITEM}, "maxItems": MAX_ITEMS}
    return {
        "name": TOOL_NAME,
        "description": (
            "Call this once, when the feature is implemented and you have run its check yourself. "
            "It ends your work on the feature; the orchestrator then runs the feature's check. "
            "Report what you did, the design decisions later features should follow, and the "
            "constraints they must respect."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "summary": {
                    "type": "string",
                    "description": "What you built or changed, in a few sentences.",
                    "maxLength": MAX_SUMMARY,
                },
                "decisions": {
                    **text_list,
                    "description": "Design decisions later features should follow, one per item "
                    "(e.g. 'Store users in data/users.json').",
                },
                "constraints": {
                    **text_list,
                    "description": "Rules later features must respect, one per item "
                    "(e.g. 'The CLI must keep exit code 2 for usage errors').",
                },
                "notes": {
                    "type": "string",
                    "description": "Anything else: open issues, caveats, follow-ups.",
                    "maxLength": MAX_NOTES,
                },
                "prevention": {
                    "type": "string", "maxLength": MAX_ITEM,
                    "description": "Only after a failed attempt: its cause and how to avoid it, one sentence.",
                },
                "defective_check": defective_check_schema(),
            },
            "required": ["summary"],
        },
    }


def defective_check_schema() -> JsonObject:
    """The `defective_check` property: for a check that is itself wrong (both agents' report tools)."""
    return {
        "type": "object",
        "description": (
            "Only if the check itself is wrong (an expected value contradicting the feature's description or "
            "acceptance criteria, re-derived by hand), never because your code fails it. Stops the retries: a "
            "person reviews the check."
        ),
        "properties": {
            "file": {"type": "string", "description": "Check file, relative to the project."},
            "line": {"type": "integer", "minimum": 1, "description": "Line of the wrong expectation."},
            "evidence": {"type": "string", "maxLength": MAX_EVIDENCE, "description": "What it expects, what is right, why."},
        },
        "required": ["file", "evidence"],
    }


def _validate(tool_input: ToolInput, ctx: ToolContext) -> ToolResult:
    # The agent loop acts on report_feature itself; run as an ordinary tool it is only checked.
    parse_report(tool_input)
    return ToolResult("Report is valid.")


def _summary(tool_input: ToolInput) -> str:
    return str(tool_input.get("summary", ""))


TOOL = Tool(TOOL_NAME, report_tool_definition, _validate, _summary)
