"""report_feature and the tool definitions sent to the API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from anthropic.types import ToolBash20250124Param, ToolParam, ToolTextEditor20250728Param

from orchestrator.tools.context import ToolContext, ToolInputError
from orchestrator.tools.dispatch import execute_tool
from orchestrator.tools.registry import tool_definitions
from orchestrator.tools.report import FeatureReport, parse_report
from tests.environments import unsandboxed


def test_a_full_report_parses() -> None:
    report = parse_report(
        {"summary": " Added login. ", "decisions": ["Sessions in cookies"], "constraints": ["Keep /api stable"],
         "notes": "Rate limiting later."}
    )
    assert report == FeatureReport(
        summary="Added login.", decisions=["Sessions in cookies"], constraints=["Keep /api stable"],
        notes="Rate limiting later.",
    )


def test_only_the_summary_is_required_and_loose_shapes_are_forgiven() -> None:
    report = parse_report({"summary": "Done", "decisions": "One decision", "constraints": None, "notes": None,
                           "extra": "ignored"})
    assert report.decisions == ["One decision"] and report.constraints == [] and report.notes == ""
    assert parse_report({"summary": "x", "decisions": ["", "  ", "kept"]}).decisions == ["kept"]


@pytest.mark.parametrize(
    ("tool_input", "message"),
    [
        ({}, "summary: required"),
        ({"summary": "   "}, "summary: must not be empty"),
        ({"summary": 3}, "summary: must be a string"),
        ({"summary": "x", "decisions": [1]}, "decisions.0: must be a string"),
        ({"summary": "x", "decisions": {"a": 1}}, "decisions: must be a list of strings"),
        ({"summary": "x" * 5000}, "summary"),
        ({"summary": "x", "constraints": ["y"] * 51}, "constraints"),
        ({"summary": "x", "decisions": ["y" * 3000]}, "at most 2000 characters"),
        ("not an object", "must be an object"),
        (None, "must be an object"),
    ],
)
def test_bad_reports_say_what_to_fix(tool_input: Any, message: str) -> None:
    with pytest.raises(ToolInputError) as caught:
        parse_report(tool_input)
    assert isinstance(caught.value, ValueError)
    assert message in str(caught.value)
    assert "Traceback" not in str(caught.value) and "pydantic" not in str(caught.value)


def test_execute_tool_only_validates_a_report(tmp_path: Path) -> None:
    ctx = ToolContext(environment=unsandboxed(tmp_path))
    assert not execute_tool("report_feature", {"summary": "ok"}, ctx).is_error
    bad = execute_tool("report_feature", {"summary": ""}, ctx)
    assert bad.is_error and "summary" in bad.content


def test_the_tool_definitions_match_the_sdk_types() -> None:
    bash, editor, report = tool_definitions()
    assert bash == {"type": "bash_20250124", "name": "bash"}
    assert editor == {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"}
    assert set(bash) <= set(ToolBash20250124Param.__annotations__)
    assert set(editor) <= set(ToolTextEditor20250728Param.__annotations__)
    assert set(report) <= set(ToolParam.__annotations__)
    schema = report["input_schema"]
    assert schema["type"] == "object" and schema["required"] == ["summary"]
    assert set(schema["properties"]) == {"summary", "decisions", "constraints", "notes", "prevention", "defective_check"}
    json.dumps(tool_definitions())  # plain JSON, ready to send


def test_the_definitions_are_identical_every_time_and_a_fresh_copy() -> None:
    first, second = tool_definitions(), tool_definitions()
    assert first == second and first is not second
    first[2]["input_schema"]["properties"].clear()
    assert tool_definitions()[2]["input_schema"]["properties"]


def test_claude_codes_report_tool_takes_a_defective_check_too():
    pytest.importorskip("claude_agent_sdk")
    from orchestrator.claude_code.session.report_server import ReportInbox

    inbox = ReportInbox()
    answer = inbox.receive({"summary": "done", "defective_check": {
        "file": "tests/test_x.py", "line": 12, "evidence": "expects 10 tokens for an expression with 8"}})

    assert not answer.get("is_error") and inbox.report is not None and inbox.report.defective_check is not None
    assert inbox.report.defective_check.where() == "tests/test_x.py:12"
