"""Warnings and notes on stderr while the live view is up: each on a line of its own, above the
status rows, as text (issue 18); without a live view, plain lines on stderr."""

from __future__ import annotations

import io

from rich.console import Console

from orchestrator.commands.rendering import user_lines
from orchestrator.commands.rendering.live_view import LiveRenderer
from orchestrator.store.event_kinds import Notice


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_without_a_live_view_a_line_is_plain_on_stderr(capsys) -> None:
    user_lines.say("moved to /p[bold]x", label=user_lines.WARNING, label_style="yellow")
    assert capsys.readouterr().err == "orchestrate: warning: moved to /p[bold]x\n"


def test_with_a_live_view_lines_go_through_its_console_as_text(monkeypatch) -> None:
    stderr, screen = _Terminal(), _Terminal()
    monkeypatch.setattr("sys.stderr", stderr)
    renderer = LiveRenderer(console=Console(file=screen, force_terminal=True, width=120))
    try:
        renderer.handle(Notice(type="warning", ts=0, message="a[/x]/state.json [bold]unreadable"))
        user_lines.say("could not write a report: [Errno 21] Is a directory", label=user_lines.WARNING)
    finally:
        renderer.close()
    user_lines.say("interrupted", label="orchestrate: ")  # the view is gone: plain again

    shown = screen.getvalue()
    assert "a[/x]/state.json [bold]unreadable" in shown
    assert "orchestrate: warning: could not write a report: [Errno 21] Is a directory" in shown
    assert stderr.getvalue() == "orchestrate: interrupted\n"


def test_a_live_view_with_stderr_sent_elsewhere_leaves_its_lines_there(monkeypatch) -> None:
    stderr, screen = io.StringIO(), _Terminal()  # `2> file`: not the terminal
    monkeypatch.setattr("sys.stderr", stderr)
    renderer = LiveRenderer(console=Console(file=screen, force_terminal=True))
    try:
        user_lines.say("note", label="orchestrate: ")
    finally:
        renderer.close()
    assert stderr.getvalue() == "orchestrate: note\n" and "note" not in screen.getvalue()


# ---- in a real terminal (tmux) -----------------------------------------------------------------


