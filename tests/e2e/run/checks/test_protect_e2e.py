"""Honest checks: the files a feature's check consists of, and noticing when the agent changed them."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.run.checks.protection import protect
from orchestrator.run.checks.protection.check_paths import check_file_keys, protected_files
from orchestrator.tools.context import ToolContext
from orchestrator.tools.dispatch import execute_tool
from tests.check_project import names, write_check_project
from tests.environments import unsandboxed


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_check_project(tmp_path)


def test_the_agent_rewriting_its_test_with_bash_is_detected(project: Path) -> None:
    """The attack of issue 8: the editor refuses, so the agent reaches for the shell."""
    protected = protected_files(project, "python3 -m pytest tests/test_app.py", [])
    ctx = ToolContext(environment=unsandboxed(project), protected=frozenset(protected))
    before = protect.snapshot(protected, project)

    refused = execute_tool(
        "str_replace_based_edit_tool",
        {"command": "create", "path": "tests/test_app.py", "file_text": "def test_main():\n    pass\n"},
        ctx,
    )
    assert refused.is_error and "protected check file" in refused.content
    assert protect.changed_files(project, before) == []

    ran = execute_tool("bash", {"command": "printf 'def test_main():\\n    pass\\n' > tests/test_app.py"}, ctx)
    assert not ran.is_error
    assert protect.changed_files(project, before) == ["tests/test_app.py"]


# ---- one attempt: take_guard, guard_changes, restore ----------------------------------------


def test_a_file_the_agent_created_after_the_first_attempt_stays_its_to_fix(project: Path) -> None:
    """Issue 13, item 1: only what existed before the feature's first attempt is its check."""
    command = "grep -q ok out.txt && python3 -m pytest tests/test_app.py"
    recorded = check_file_keys(project, command)  # at the first attempt, before the agent ran
    assert recorded == ["tests/test_app.py"]
    (project / "out.txt").write_text("wrong\n")  # what the agent wrote in attempt 1

    guard = protect.take_guard(project, command, [], check_files=[project / key for key in recorded])

    # The check's file, and the run's configuration, guarded in every attempt.
    assert names(project, guard.files) == ["tests/test_app.py", "orchestrate.toml"]
    ctx = ToolContext(environment=unsandboxed(project), protected=frozenset(guard.files))
    edit = {"command": "str_replace", "path": "out.txt", "old_str": "wrong", "new_str": "ok"}
    assert not execute_tool("str_replace_based_edit_tool", edit, ctx).is_error
    assert not execute_tool("bash", {"command": "echo ok > out.txt"}, ctx).is_error
    assert protect.guard_changes(guard) == []
    refused = execute_tool("str_replace_based_edit_tool", {"command": "create", "path": "tests/test_app.py",
                                                           "file_text": "def test_main():\n    pass\n"}, ctx)
    assert refused.is_error and "protected check file" in refused.content
    # Taking the set again at attempt 2 is what made the agent's own output a locked check.
    assert "out.txt" in names(project, protect.take_guard(project, command, []).files)
