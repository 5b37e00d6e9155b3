"""The answers `orchestrate plan` asks the model for, as forced tools.

Each answer is the `input` of one tool call the model is forced to make (`tool_choice`), and
each tool's `input_schema` is derived from the spec's own pydantic models, so the planner is
asked for exactly the fields a spec has, described by the same docstrings. What comes back is
still validated by `orchestrator.spec.load.parse_spec`, like any spec.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from orchestrator.json_types import JsonSchema
from orchestrator.spec.feature_spec import Feature, SpecSettings
from orchestrator.spec.fields import Command, Text

if TYPE_CHECKING:  # the SDK takes seconds to import; its types are for the checker only
    from anthropic.types import ToolParam

SPEC_TOOL = "submit_spec"
CHECKS_TOOL = "submit_checks"
# What the planner fills in; the rest (attempts, priority, protected, red) is ours to set.
PLANNED_FEATURE_FIELDS = ("id", "name", "category", "description", "acceptance", "depends_on", "verify")
PLANNED_SETTINGS = ("project", "description")
MAX_CHECK_FILES = 5


def _properties(model: type[BaseModel], names: tuple[str, ...]) -> JsonSchema:
    """The JSON schema of `names` in `model`, each non-optional (the planner must say it)."""
    source = model.model_json_schema()["properties"]
    chosen: JsonSchema = {}
    for name in names:
        prop = {k: v for k, v in source[name].items() if k not in ("default", "title")}
        if "anyOf" in prop:  # `str | None`: the planner gives a string
            prop = {"type": "string", "description": prop.get("description", "")}
        chosen[name] = prop
    return chosen


def spec_tool() -> ToolParam:
    """The tool the planner calls with its features: a native spec's fields, no more."""
    feature = {
        "type": "object",
        "properties": _properties(Feature, PLANNED_FEATURE_FIELDS),
        "required": list(PLANNED_FEATURE_FIELDS),
    }
    settings = _properties(SpecSettings, PLANNED_SETTINGS)
    schema: JsonSchema = {
        "type": "object",
        "properties": {
            **settings,
            "features": {"type": "array", "items": feature, "description": "The features, in the order to build them."},
        },
        "required": [*PLANNED_SETTINGS, "features"],
    }
    return {
        "name": SPEC_TOOL,
        "description": "Submit the planned features of the project as a feature spec.",
        "input_schema": schema,
    }


class CheckFile(BaseModel):
    """One file of a feature's check."""

    model_config = ConfigDict(strict=True, extra="ignore", use_attribute_docstrings=True)

    path: str
    """Relative to the project directory, e.g. tests/features/test_<id>.py."""
    content: Text
    """The whole file."""


class CheckAnswer(BaseModel):
    """A feature's check: the files to write and the command that runs them."""

    model_config = ConfigDict(strict=True, extra="ignore", use_attribute_docstrings=True)

    files: list[CheckFile] = Field(min_length=1, max_length=MAX_CHECK_FILES)
    """The check's files (tests only, never the feature's code)."""
    verify: Command
    """Shell command, run in the project directory, that runs exactly these checks; exit 0 = the feature works."""
    notes: str = ""
    """Anything the reviewer should know about the check."""


def checks_tool() -> ToolParam:
    """The tool the check writer calls with one feature's check."""
    schema = CheckAnswer.model_json_schema()
    schema.pop("title", None)
    schema["required"] = ["files", "verify"]
    return {
        "name": CHECKS_TOOL,
        "description": "Submit the check (test files and the command that runs them) for one feature.",
        "input_schema": schema,
    }
