"""The text editor tool: what the model sees, and what it may not touch."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from orchestrator.tools.context import ToolContext, ToolResult
from orchestrator.tools.dispatch import execute_tool
from tests.environments import unsandboxed

EDITOR = "str_replace_based_edit_tool"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("def main():\n    return 1\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_app.py").write_text("from src.app import main\n\ndef test_main():\n    assert main() == 2\n")
    (root / ".autonomous" / "state").mkdir(parents=True)
    (root / ".autonomous" / "state" / "execution-state.json").write_text('{"ok": true}\n')
    return root.resolve()


@pytest.fixture
def ctx(project: Path) -> ToolContext:
    return ToolContext(environment=unsandboxed(project), protected=frozenset({project / "tests" / "test_app.py"}))


def edit(ctx: ToolContext, **tool_input: object) -> ToolResult:
    return execute_tool(EDITOR, tool_input, ctx)


# -- view ---------------------------------------------------------------------------------


def test_view_shows_numbered_lines_like_cat_n(ctx: ToolContext) -> None:
    result = edit(ctx, command="view", path="src/app.py")
    assert not result.is_error
    assert "     1\tdef main():\n     2\t    return 1" in result.content


def test_view_range_shows_only_those_lines_and_minus_one_means_the_end(ctx: ToolContext, project: Path) -> None:
    (project / "many.txt").write_text("".join(f"line {n}\n" for n in range(1, 21)))
    middle = edit(ctx, command="view", path="many.txt", view_range=[5, 7])
    assert "     5\tline 5" in middle.content and "     7\tline 7" in middle.content
    assert "line 4\n" not in middle.content and "line 8" not in middle.content
    tail = edit(ctx, command="view", path="many.txt", view_range=[19, -1])
    assert "    19\tline 19" in tail.content and "    20\tline 20" in tail.content


@pytest.mark.parametrize("bad", [[0, 2], [30, 40], [5, 3], [1], "1-3", [True, 2], [1.5, 2]])
def test_a_bad_view_range_is_an_error_not_a_crash(ctx: ToolContext, bad: object) -> None:
    result = edit(ctx, command="view", path="src/app.py", view_range=bad)
    assert result.is_error
    assert "view_range" in result.content


def test_view_of_a_small_directory_lists_every_level_without_hidden_entries(ctx: ToolContext, project: Path) -> None:
    (project / "src" / "pkg" / "deep").mkdir(parents=True)
    (project / "src" / "pkg" / "deep" / "deeper.py").write_text("")
    (project / ".env").write_text("X=1")
    result = edit(ctx, command="view", path=".")
    assert not result.is_error
    lines = result.content.splitlines()[1:]
    assert "src/" in lines and "src/app.py" in lines and "src/pkg/" in lines
    assert "tests/test_app.py" in lines and "src/pkg/deep/deeper.py" in lines  # small: every level
    assert not any(".autonomous" in line or ".env" in line for line in lines)


def test_view_of_a_big_directory_lists_two_levels(ctx: ToolContext, project: Path) -> None:
    (project / "src" / "pkg" / "deep").mkdir(parents=True)
    for index in range(120):
        (project / "src" / "pkg" / "deep" / f"m{index}.py").write_text("")
    result = edit(ctx, command="view", path=".")
    lines = result.content.splitlines()[1:]
    assert "up to 2 levels deep" in result.content and "src/pkg/" in lines
    assert not any("deep/" in line for line in lines)


def test_empty_file_and_missing_file(ctx: ToolContext, project: Path) -> None:
    (project / "empty.txt").write_text("")
    assert "empty" in edit(ctx, command="view", path="empty.txt").content
    missing = edit(ctx, command="view", path="nope.py")
    assert missing.is_error and "does not exist" in missing.content


def test_binary_and_non_utf8_files_give_a_clear_error(ctx: ToolContext, project: Path) -> None:
    (project / "blob.bin").write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe\x00\x01")
    result = edit(ctx, command="view", path="blob.bin")
    assert result.is_error and "not UTF-8" in result.content
    replace = edit(ctx, command="str_replace", path="blob.bin", old_str="PNG", new_str="x")
    assert replace.is_error and "not UTF-8" in replace.content


def test_a_huge_file_is_refused_with_advice(ctx: ToolContext, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from orchestrator.tools import editor

    monkeypatch.setattr(editor, "MAX_FILE_BYTES", 1000)
    (project / "big.log").write_text("x" * 5000)
    result = edit(ctx, command="view", path="big.log")
    assert result.is_error and "too large" in result.content and "head" in result.content


def test_a_fifo_is_not_read(ctx: ToolContext, project: Path) -> None:
    os.mkfifo(project / "pipe")
    result = edit(ctx, command="view", path="pipe")  # would block forever if opened
    assert result.is_error and "not a regular file" in result.content


def test_long_view_output_is_capped_with_a_hint(project: Path) -> None:
    ctx = ToolContext(environment=unsandboxed(project), output_cap=2000)
    (project / "long.txt").write_text("".join(f"line {n}\n" for n in range(5000)))
    result = edit(ctx, command="view", path="long.txt")
    assert len(result.content) < 2300
    assert "elided" in result.content and "view_range" in result.content
    assert "line 0" in result.content and "line 4999" in result.content


# -- create / str_replace / insert --------------------------------------------------------


def test_create_makes_parent_directories_and_overwrites(ctx: ToolContext, project: Path) -> None:
    result = edit(ctx, command="create", path="pkg/sub/mod.py", file_text="X = 1\n")
    assert not result.is_error, result.content
    assert (project / "pkg" / "sub" / "mod.py").read_text() == "X = 1\n"
    again = edit(ctx, command="create", path="pkg/sub/mod.py", file_text="X = 2\n")
    assert "overwritten" in again.content
    assert (project / "pkg" / "sub" / "mod.py").read_text() == "X = 2\n"


def test_create_needs_file_text(ctx: ToolContext) -> None:
    result = edit(ctx, command="create", path="a.py")
    assert result.is_error and "file_text is required" in result.content


def test_str_replace_replaces_a_unique_string_and_shows_the_result(ctx: ToolContext, project: Path) -> None:
    result = edit(ctx, command="str_replace", path="src/app.py", old_str="return 1", new_str="return 2")
    assert not result.is_error, result.content
    assert (project / "src" / "app.py").read_text() == "def main():\n    return 2\n"
    assert "     2\t    return 2" in result.content


def test_str_replace_without_new_str_deletes(ctx: ToolContext, project: Path) -> None:
    edit(ctx, command="str_replace", path="src/app.py", old_str="    return 1\n")
    assert (project / "src" / "app.py").read_text() == "def main():\n"


def test_str_replace_refuses_ambiguous_or_absent_text_and_says_how_often(ctx: ToolContext, project: Path) -> None:
    (project / "dup.py").write_text("x = 1\ny = 2\nx = 1\n")
    twice = edit(ctx, command="str_replace", path="dup.py", old_str="x = 1", new_str="x = 3")
    assert twice.is_error and "2 times" in twice.content and "lines 1, 3" in twice.content
    absent = edit(ctx, command="str_replace", path="dup.py", old_str="z = 9", new_str="")
    assert absent.is_error and "does not appear" in absent.content
    assert (project / "dup.py").read_text() == "x = 1\ny = 2\nx = 1\n"


def test_insert_after_a_line_at_the_top_and_at_the_end(ctx: ToolContext, project: Path) -> None:
    (project / "f.txt").write_text("a\nb")  # no final newline
    edit(ctx, command="insert", path="f.txt", insert_line=0, insert_text="top")
    edit(ctx, command="insert", path="f.txt", insert_line=2, insert_text="middle\n")
    edit(ctx, command="insert", path="f.txt", insert_line=4, insert_text="end")
    assert (project / "f.txt").read_text() == "top\na\nmiddle\nb\nend\n"


def test_insert_accepts_the_older_new_str_field(ctx: ToolContext, project: Path) -> None:
    (project / "f.txt").write_text("a\n")
    result = edit(ctx, command="insert", path="f.txt", insert_line=1, new_str="b")
    assert not result.is_error
    assert (project / "f.txt").read_text() == "a\nb\n"


def test_insert_line_out_of_range_is_an_error(ctx: ToolContext, project: Path) -> None:
    (project / "f.txt").write_text("a\n")
    result = edit(ctx, command="insert", path="f.txt", insert_line=5, insert_text="x")
    assert result.is_error and "0-1" in result.content


def test_crlf_files_keep_their_line_endings(ctx: ToolContext, project: Path) -> None:
    (project / "win.txt").write_bytes(b"one\r\ntwo\r\n")
    edit(ctx, command="str_replace", path="win.txt", old_str="two", new_str="2")
    assert (project / "win.txt").read_bytes() == b"one\r\n2\r\n"


def test_an_edit_keeps_the_file_mode(ctx: ToolContext, project: Path) -> None:
    script = project / "run.sh"
    script.write_text("#!/bin/sh\necho 1\n")
    script.chmod(0o755)
    edit(ctx, command="str_replace", path="run.sh", old_str="echo 1", new_str="echo 2")
    assert script.stat().st_mode & 0o777 == 0o755


def test_undo_edit_and_unknown_commands_are_errors(ctx: ToolContext) -> None:
    undo = edit(ctx, command="undo_edit", path="src/app.py")
    assert undo.is_error and "undo_edit is not available" in undo.content
    unknown = edit(ctx, command="delete", path="src/app.py")
    assert unknown.is_error and "view, create, str_replace, insert" in unknown.content


# -- confinement --------------------------------------------------------------------------


def test_absolute_paths_inside_the_project_work(ctx: ToolContext, project: Path) -> None:
    result = edit(ctx, command="view", path=str(project / "src" / "app.py"))
    assert not result.is_error


@pytest.mark.parametrize("path", ["../x", "/tmp/x", "src/../../x", "~/x", "/etc/passwd", "a\x00b", ""])
def test_paths_leaving_the_project_are_refused_for_writes(ctx: ToolContext, project: Path, path: str) -> None:
    result = edit(ctx, command="create", path=path, file_text="owned")
    assert result.is_error
    assert not (project.parent / "x").exists()


def test_reading_outside_the_project_is_refused(ctx: ToolContext, project: Path) -> None:
    (project.parent / "secret.txt").write_text("top secret")
    result = edit(ctx, command="view", path="../secret.txt")
    assert result.is_error and "outside the project" in result.content
    assert "top secret" not in result.content


def test_a_symlink_leading_out_is_refused_for_reading_and_writing(ctx: ToolContext, project: Path) -> None:
    outside = project.parent / "outside"
    outside.mkdir()
    (outside / "data.txt").write_text("outside data\n")
    (project / "link").symlink_to(outside)
    (project / "file_link").symlink_to(outside / "data.txt")
    for path in ("link/data.txt", "file_link"):
        view = edit(ctx, command="view", path=path)
        assert view.is_error and "symbolic link" in view.content
        write = edit(ctx, command="str_replace", path=path, old_str="outside", new_str="inside")
        assert write.is_error
    create = edit(ctx, command="create", path="link/new.txt", file_text="x")
    assert create.is_error
    assert (outside / "data.txt").read_text() == "outside data\n"
    assert not (outside / "new.txt").exists()


def test_a_dangling_symlink_pointing_out_cannot_be_created_through(ctx: ToolContext, project: Path) -> None:
    target = project.parent / "created-through-link.txt"
    (project / "dangling").symlink_to(target)
    result = edit(ctx, command="create", path="dangling", file_text="x")
    assert result.is_error
    assert not target.exists()


def test_a_symlink_inside_the_project_is_followed(ctx: ToolContext, project: Path) -> None:
    (project / "alias.py").symlink_to(project / "src" / "app.py")
    result = edit(ctx, command="view", path="alias.py")
    assert not result.is_error and "def main" in result.content


def test_a_symlink_loop_is_an_error(ctx: ToolContext, project: Path) -> None:
    (project / "loop_a").symlink_to(project / "loop_b")
    (project / "loop_b").symlink_to(project / "loop_a")
    result = edit(ctx, command="view", path="loop_a")
    assert result.is_error


def test_the_state_directory_is_readable_but_not_writable(ctx: ToolContext, project: Path) -> None:
    state = project / ".autonomous" / "state" / "execution-state.json"
    assert not edit(ctx, command="view", path=".autonomous/state/execution-state.json").is_error
    attempts: list[dict[str, object]] = [
        dict(command="create", path=".autonomous/state/execution-state.json", file_text="{}"),
        dict(command="str_replace", path=".autonomous/state/execution-state.json", old_str="true", new_str="false"),
        dict(command="insert", path=".autonomous/state/execution-state.json", insert_line=0, insert_text="x"),
        dict(command="create", path=str(state), file_text="{}"),
        dict(command="create", path="src/../.autonomous/state/new.json", file_text="{}"),
        dict(command="create", path=".AUTONOMOUS/state/x.json", file_text="{}"),
    ]
    for attempt in attempts:
        result = edit(ctx, **attempt)
        assert result.is_error and "not writable" in result.content, attempt
    assert state.read_text() == '{"ok": true}\n'


def test_git_internals_are_not_writable(ctx: ToolContext, project: Path) -> None:
    (project / ".git" / "hooks").mkdir(parents=True)
    result = edit(ctx, command="create", path=".git/hooks/pre-commit", file_text="#!/bin/sh\n")
    assert result.is_error and ".git" in result.content
    assert not (project / ".git" / "hooks" / "pre-commit").exists()


def test_a_symlink_into_the_state_directory_does_not_make_it_writable(ctx: ToolContext, project: Path) -> None:
    (project / "state_link").symlink_to(project / ".autonomous" / "state")
    result = edit(ctx, command="create", path="state_link/execution-state.json", file_text="{}")
    assert result.is_error and "not writable" in result.content


def test_protected_check_files_are_refused_with_a_clear_reason(ctx: ToolContext, project: Path) -> None:
    test_file = project / "tests" / "test_app.py"
    original = test_file.read_text()
    attempts: list[dict[str, object]] = [
        dict(command="str_replace", path="tests/test_app.py", old_str="== 2", new_str="== 1"),
        dict(command="create", path="tests/test_app.py", file_text="def test_main():\n    pass\n"),
        dict(command="insert", path="tests/test_app.py", insert_line=0, insert_text="import pytest"),
    ]
    for attempt in attempts:
        result = edit(ctx, **attempt)
        assert result.is_error
        assert "protected check file" in result.content
        assert "make the code pass the check instead of changing the check" in result.content
    assert test_file.read_text() == original
    assert not edit(ctx, command="view", path="tests/test_app.py").is_error


def test_a_hard_link_to_a_protected_file_is_protected_too(ctx: ToolContext, project: Path) -> None:
    os.link(project / "tests" / "test_app.py", project / "innocent.py")
    result = edit(ctx, command="create", path="innocent.py", file_text="pass\n")
    assert result.is_error and "protected" in result.content


def test_bad_input_types_are_errors_not_exceptions(ctx: ToolContext) -> None:
    for tool_input in [
        {"command": "view"},
        {"command": "view", "path": 42},
        {"command": "create", "path": "a.py", "file_text": ["x"]},
        {"command": "str_replace", "path": "src/app.py", "old_str": None},
        {"command": "str_replace", "path": "src/app.py", "old_str": ""},
        {"command": "insert", "path": "src/app.py", "insert_line": "1", "insert_text": "x"},
        {"command": "insert", "path": "src/app.py", "insert_line": True, "insert_text": "x"},
        {"command": None},
        {},
    ]:
        result = execute_tool(EDITOR, tool_input, ctx)
        assert result.is_error, tool_input
        assert "Traceback" not in result.content
