"""execute_tool: whatever the model sends, the orchestrator gets a result, never an exception."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orchestrator.tools import editor as editor_module
from orchestrator.tools import registry
from orchestrator.tools.context import Tool, ToolContext, ToolResult
from orchestrator.tools.dispatch import execute_tool
from orchestrator.tools.registry import TOOLS, summarize_input, tool_definitions
from tests.environments import unsandboxed

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=30),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=12,
)
editor_inputs = st.fixed_dictionaries(
    {"command": st.sampled_from(["view", "create", "str_replace", "insert", "undo_edit", "bogus"])},
    optional={
        "path": st.one_of(st.text(max_size=40), st.sampled_from(["a.txt", "../x", "/tmp/x", ".autonomous/x", "."]),
                          json_values),
        "file_text": st.one_of(st.text(max_size=40), json_values),
        "old_str": st.one_of(st.text(max_size=10), json_values),
        "new_str": st.one_of(st.text(max_size=10), json_values),
        "insert_line": st.one_of(st.integers(-3, 10), json_values),
        "insert_text": st.one_of(st.text(max_size=10), json_values),
        "view_range": st.one_of(st.lists(st.integers(-3, 10), max_size=3), json_values),
    },
)


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("dispatch")
    project = base / "project"
    (project / ".autonomous").mkdir(parents=True)
    (project / "a.txt").write_text("alpha\nbeta\n")
    return project.resolve()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tool_input=editor_inputs)
def test_the_editor_never_raises_and_never_writes_outside(root: Path, tool_input: dict[str, Any]) -> None:
    ctx = ToolContext(environment=unsandboxed(root))
    result = execute_tool("str_replace_based_edit_tool", tool_input, ctx)
    assert isinstance(result.content, str) and result.content
    assert "Traceback" not in result.content
    outside = [p for p in root.parent.iterdir() if p != root]
    assert outside == []
    assert list((root / ".autonomous").iterdir()) == []


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.one_of(st.text(max_size=20), json_values), tool_input=json_values)
def test_unknown_tools_and_malformed_inputs_are_errors(root: Path, name: Any, tool_input: Any) -> None:
    ctx = ToolContext(environment=unsandboxed(root))
    if name in ("bash", "str_replace_based_edit_tool", "report_feature") and isinstance(tool_input, dict):
        return
    result = execute_tool(name, tool_input, ctx)
    assert result.is_error and result.content


def test_an_unexpected_failure_is_contained_in_one_line(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(*_args: Any) -> Any:
        raise KeyError("internal detail")

    monkeypatch.setitem(editor_module._COMMANDS, "view", explode)
    result = execute_tool("str_replace_based_edit_tool", {"command": "view", "path": "a.txt"}, ToolContext(unsandboxed(root)))
    assert result.is_error
    assert result.content == "str_replace_based_edit_tool failed unexpectedly: KeyError: 'internal detail'"


def test_keyboard_interrupt_is_not_swallowed(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*_args: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setitem(editor_module._COMMANDS, "view", interrupted)
    with pytest.raises(KeyboardInterrupt):
        execute_tool("str_replace_based_edit_tool", {"command": "view", "path": "a.txt"}, ToolContext(unsandboxed(root)))


def test_secrets_in_any_tool_output_are_redacted(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-ant-api03-" + "z" * 40
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    (root / "leak.txt").write_text(f"key: {key}\n")
    try:
        result = execute_tool("str_replace_based_edit_tool", {"command": "view", "path": "leak.txt"}, ToolContext(unsandboxed(root)))
    finally:
        (root / "leak.txt").unlink()
    assert key not in result.content and "[REDACTED]" in result.content


def test_the_registry_is_the_one_list_of_tools() -> None:
    names = [tool.name for tool in TOOLS]
    assert names == ["bash", "str_replace_based_edit_tool", "report_feature"]
    assert [definition["name"] for definition in tool_definitions()] == names


def test_a_registered_tool_is_sent_run_and_summarized(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    echo = Tool(
        "echo",
        lambda: {"name": "echo", "input_schema": {"type": "object"}},
        lambda tool_input, ctx: ToolResult(str(tool_input.get("text", ""))),
        lambda tool_input: f"echo {tool_input.get('text', '')}",
    )
    monkeypatch.setattr(registry, "TOOLS", (*TOOLS, echo))
    monkeypatch.setitem(registry._BY_NAME, "echo", echo)
    assert tool_definitions()[-1]["name"] == "echo"
    assert execute_tool("echo", {"text": "hi"}, ToolContext(unsandboxed(root))).content == "hi"
    assert summarize_input("echo", {"text": "hi"}) == "echo hi"


def test_each_tool_summarizes_its_input_in_one_capped_line() -> None:
    assert summarize_input("bash", {"command": "ls -la"}) == "ls -la"
    assert summarize_input("str_replace_based_edit_tool", {"command": "view", "path": "a.txt"}) == "view a.txt"
    assert summarize_input("report_feature", {"summary": "Done"}) == "Done"
    assert len(summarize_input("bash", {"command": "x" * 500})) == 200
    assert summarize_input("nope", {"command": "ls"}) == summarize_input("bash", "ls") == ""
