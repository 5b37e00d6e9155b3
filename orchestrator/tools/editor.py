"""The text editor tool (`text_editor_20250728`, named `str_replace_based_edit_tool`).

Commands: `view` (a file `cat -n` style, optionally `view_range`; a directory two levels
deep), `create`, `str_replace`, `insert`. This version of the tool has no `undo_edit`.
Every path goes through `confinement`; files are read and written by `text_files` (UTF-8
bytes without newline translation, so CRLF files stay CRLF; atomic writes, mode kept).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final

from orchestrator.json_types import ToolInput
from orchestrator.tools.confinement import check_writable, relative, resolve_in_project
from orchestrator.tools.context import Tool, ToolContext, ToolError, ToolInputError, ToolResult
from orchestrator.tools.text_files import read_text, split_lines, write_text

if TYPE_CHECKING:  # the SDK takes seconds to import; its types are for the checker only
    from anthropic.types import ToolTextEditor20250728Param

TOOL_NAME: Final = "str_replace_based_edit_tool"
COMMANDS = ("view", "create", "str_replace", "insert")
# Bigger files are for `head`, `sed -n` and `grep`, not for a tool that reads them whole.
MAX_FILE_BYTES = 5_000_000
MAX_LISTING_ENTRIES = 1000
SNIPPET_CONTEXT = 4
# Directory listings skip these as well as hidden entries: noise the model never needs.
_LISTING_SKIP = {"__pycache__", "node_modules"}


def run_editor(tool_input: ToolInput, ctx: ToolContext) -> ToolResult:
    """Carry out one editor command; ToolError for anything the model must fix."""
    command = tool_input.get("command")
    handler = _COMMANDS.get(command) if isinstance(command, str) else None
    if command == "undo_edit":
        raise ToolInputError(
            "undo_edit is not available in this editor version; make the reverse change with str_replace"
        )
    if handler is None:
        raise ToolInputError(f"unknown command {str(command)[:60]!r}; use one of: {', '.join(COMMANDS)}")
    path = resolve_in_project(tool_input.get("path"), ctx.project_root)
    return handler(path, tool_input, ctx)


# -- view ---------------------------------------------------------------------------------


def _view(path: Path, tool_input: ToolInput, ctx: ToolContext) -> ToolResult:
    shown = relative(path, ctx.project_root)
    if path.is_dir():
        if tool_input.get("view_range") is not None:
            raise ToolInputError("view_range applies to files only; omit it to list a directory")
        return ToolResult(_listing(path, ctx.project_root))
    text = read_text(path, shown, MAX_FILE_BYTES)
    lines = split_lines(text)
    if not lines:
        return ToolResult(f"{shown} is empty.")
    start, end = _view_range(tool_input.get("view_range"), len(lines))
    numbered = _numbered(lines[start - 1 : end], start)
    header = f"Here's the content of {shown}" + (
        f" (lines {start}-{end} of {len(lines)})" if (start, end) != (1, len(lines)) else ""
    )
    return ToolResult(f"{header}:\n{numbered}")


def _view_range(raw: object, line_count: int) -> tuple[int, int]:
    if raw is None:
        return 1, line_count
    if (
        not isinstance(raw, (list, tuple))
        or len(raw) != 2
        or not all(isinstance(n, int) and not isinstance(n, bool) for n in raw)
    ):
        raise ToolInputError("view_range must be two integers [start_line, end_line]; end_line -1 means the end")
    start, end = raw
    if start < 1 or start > line_count:
        raise ToolInputError(f"view_range start {start} is outside the file's lines 1-{line_count}")
    if end == -1 or end > line_count:
        # Asking past the end is a harmless overshoot; show what there is.
        end = line_count
    if end < start:
        raise ToolInputError(f"view_range end {end} is before its start {start}")
    return start, end


SMALL_TREE = 100  # a directory with at most this many entries in all is listed at every depth


def _listing(directory: Path, root: Path) -> str:
    whole = _whole_tree(directory, root)
    if whole is not None:  # small: every level, so `tests/features/` does not look empty
        shown = relative(directory, root)
        if not whole:
            return f"{shown} is an empty directory (hidden entries are not listed)."
        return f"Here are all the files and directories in {shown}, excluding hidden items:\n" + "\n".join(whole)
    entries: list[str] = []
    truncated = False
    for child in _children(directory):
        entries.append(_entry(child, root))
        if child.is_dir() and not child.is_symlink():
            for grandchild in _children(child):
                entries.append(_entry(grandchild, root))
        if len(entries) >= MAX_LISTING_ENTRIES:
            truncated = True
            break
    shown = relative(directory, root)
    if not entries:
        return f"{shown} is an empty directory (hidden entries are not listed)."
    note = f"\n(listing stopped after {MAX_LISTING_ENTRIES} entries; use bash `find` for more)" if truncated else ""
    return (
        f"Here are the files and directories up to 2 levels deep in {shown}, excluding hidden items:\n"
        + "\n".join(entries[:MAX_LISTING_ENTRIES])
        + note
    )


def _whole_tree(directory: Path, root: Path) -> list[str] | None:
    """Every entry under `directory` at any depth (links not followed), or None past `SMALL_TREE`."""
    entries: list[str] = []
    pending = [directory]
    while pending:
        for child in _children(pending.pop()):
            entries.append(_entry(child, root))
            if len(entries) > SMALL_TREE:
                return None
            if child.is_dir() and not child.is_symlink():
                pending.append(child)
    return sorted(entries)


def _children(directory: Path) -> list[Path]:
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    return [directory / n for n in names if not n.startswith(".") and n not in _LISTING_SKIP]


def _entry(path: Path, root: Path) -> str:
    shown = path.relative_to(root).as_posix() if root in path.parents else path.name
    return shown + ("/" if path.is_dir() else "")


# -- create -------------------------------------------------------------------------------


def _create(path: Path, tool_input: ToolInput, ctx: ToolContext) -> ToolResult:
    text = _string_field(tool_input, "file_text")
    check_writable(path, ctx)
    shown = relative(path, ctx.project_root)
    if path.is_dir():
        raise ToolError(f"{shown} is a directory; give a file path")
    existed = path.exists()
    write_text(path, text, shown)
    verb = "overwritten" if existed else "created"
    return ToolResult(f"File {verb}: {shown} ({_count_lines(text)} lines).")


# -- str_replace --------------------------------------------------------------------------


def _str_replace(path: Path, tool_input: ToolInput, ctx: ToolContext) -> ToolResult:
    old = _string_field(tool_input, "old_str")
    new = tool_input.get("new_str")
    if new is None:
        new = ""
    if not isinstance(new, str):
        raise ToolInputError(f"new_str must be a string, got {type(new).__name__}")
    if old == "":
        raise ToolInputError("old_str is empty; give the exact text to replace (use insert to add text)")
    check_writable(path, ctx)
    shown = relative(path, ctx.project_root)
    text = read_text(path, shown, MAX_FILE_BYTES)
    count = text.count(old)
    if count == 0:
        raise ToolError(
            f"no replacement made: old_str does not appear verbatim in {shown}; view the file and copy the "
            "text exactly, including whitespace and indentation"
        )
    if count > 1:
        lines = _occurrence_lines(text, old)
        raise ToolError(
            f"no replacement made: old_str occurs {count} times in {shown} (lines {', '.join(map(str, lines))}); "
            "include more surrounding lines so that it is unique"
        )
    at = text.index(old)
    updated = text[:at] + new + text[at + len(old) :]
    write_text(path, updated, shown)
    first = text.count("\n", 0, at) + 1
    return ToolResult(f"The file {shown} has been edited. {_snippet(updated, first, new.count(chr(10)) + 1)}")


def _occurrence_lines(text: str, needle: str) -> list[int]:
    lines: list[int] = []
    start = 0
    while (at := text.find(needle, start)) != -1 and len(lines) < 20:
        lines.append(text.count("\n", 0, at) + 1)
        start = at + 1
    return lines


# -- insert -------------------------------------------------------------------------------


def _insert(path: Path, tool_input: ToolInput, ctx: ToolContext) -> ToolResult:
    after = tool_input.get("insert_line")
    if not isinstance(after, int) or isinstance(after, bool):
        raise ToolInputError("insert_line must be an integer: the line to insert after (0 = top of the file)")
    # Older editor versions called the text `new_str`; accept it rather than fail the model.
    field = "insert_text" if "insert_text" in tool_input or "new_str" not in tool_input else "new_str"
    addition = _string_field(tool_input, field)
    if addition == "":
        raise ToolInputError("insert_text is empty; nothing to insert")
    check_writable(path, ctx)
    shown = relative(path, ctx.project_root)
    text = read_text(path, shown, MAX_FILE_BYTES)
    lines = split_lines(text)
    if after < 0 or after > len(lines):
        raise ToolInputError(f"insert_line {after} is outside 0-{len(lines)} (the file has {len(lines)} lines)")
    if after == len(lines) and lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    block = addition if addition.endswith("\n") else addition + "\n"
    updated = "".join(lines[:after]) + block + "".join(lines[after:])
    write_text(path, updated, shown)
    return ToolResult(
        f"Text inserted after line {after} of {shown}. {_snippet(updated, after + 1, block.count(chr(10)))}"
    )


# -- shared -------------------------------------------------------------------------------


def _string_field(tool_input: ToolInput, name: str) -> str:
    value = tool_input.get(name)
    if value is None:
        raise ToolInputError(f"{name} is required for the {tool_input.get('command')} command")
    if not isinstance(value, str):
        raise ToolInputError(f"{name} must be a string, got {type(value).__name__}")
    return value


def _count_lines(text: str) -> int:
    return len(split_lines(text))


def _numbered(lines: list[str], first: int) -> str:
    return "\n".join(f"{n:6}\t{line.rstrip(chr(10))}" for n, line in enumerate(lines, start=first))


def _snippet(text: str, first_line: int, changed_lines: int) -> str:
    """The edited region with a few lines around it, numbered, so the model can check its edit."""
    lines = split_lines(text)
    start = max(first_line - SNIPPET_CONTEXT, 1)
    end = min(first_line + changed_lines - 1 + SNIPPET_CONTEXT, len(lines))
    if not lines:
        return "The file is now empty."
    return f"Lines {start}-{end} now read:\n{_numbered(lines[start - 1 : end], start)}"


_COMMANDS: dict[str, Callable[[Path, ToolInput, ToolContext], ToolResult]] = {
    "view": _view,
    "create": _create,
    "str_replace": _str_replace,
    "insert": _insert,
}


def _definition() -> ToolTextEditor20250728Param:
    # Anthropic-defined and schema-less: the model knows the inputs, the API fixes the name.
    return {"type": "text_editor_20250728", "name": TOOL_NAME}


def _summary(tool_input: ToolInput) -> str:
    return f"{tool_input.get('command', '')} {tool_input.get('path', '')}"


TOOL = Tool(TOOL_NAME, _definition, run_editor, _summary, elision_hint="use view_range to see a part")
