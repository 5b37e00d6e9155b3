"""Plain output: lines a CI log or a pipe can hold, with no escape sequence from anyone's text."""

from __future__ import annotations

import io

from orchestrator.commands.output import PlainRenderer, printable


def test_control_characters_are_shown_escaped_newlines_and_tabs_kept() -> None:
    assert printable("a\x1b[31mred\x1b[0m\tb\nc\x07\x9b") == "a\\x1b[31mred\\x1b[0m\tb\nc\\x07\\x9b"


def test_plain_lines_and_warnings_carry_no_escape_sequence() -> None:
    out, err = io.StringIO(), io.StringIO()
    renderer = PlainRenderer(verbosity=1, out=out, err=err)
    renderer.handle({"type": "tool_call", "tool": "bash", "summary": "printf '\x1b]0;pwned\x07'"})
    renderer.handle({"type": "warning", "message": "check printed \x1b[2J"})
    assert "\x1b" not in out.getvalue() + err.getvalue()
    assert "\\x1b]0;pwned\\x07" in out.getvalue()
    assert err.getvalue() == "orchestrate: warning: check printed \\x1b[2J\n"
