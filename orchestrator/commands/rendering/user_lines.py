"""Lines for the user on stderr (warnings, notes, the interrupt), printed cleanly whether or not
the live view holds the terminal.

While the live view (`live_view.LiveRenderer`) is drawn, a line written straight to the terminal
lands where its status rows are: glued to the last one, or drawn over at the next refresh (a
rich `Console(stderr=True)` writes past the view, too). So the view attaches its console here
for as long as it is up, and every such line goes through it, above the rows, as text (rich
markup in a message stays literal). Without a live view, or when stderr is not the terminal
(`2> file`), a line is a plain line on stderr.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from rich.console import Console

WARNING = "orchestrate: warning: "  # the label of a warning line
_live_consoles: list[Console] = []  # the live view's console while it is up (one at a time)


def attach(console: Console) -> None:
    """The live view is up on `console`: lines go through it until `detach`."""
    _live_consoles.append(console)


def detach(console: Console) -> None:
    """The live view on `console` is gone."""
    if console in _live_consoles:
        _live_consoles.remove(console)


def _stderr() -> TextIO:
    # rich swaps sys.stderr for a proxy while a live view is up; the real stream is behind it.
    stream: TextIO = getattr(sys.stderr, "rich_proxied_file", sys.stderr)
    return stream


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no such method, or closed
        return False


def say(message: str, *, label: str = "", label_style: str = "") -> None:
    """One line, `label` then `message`: through the live view when one is up on this terminal,
    plain on stderr otherwise. Neither is read as markup."""
    stream = _stderr()
    if _live_consoles and _is_terminal(stream):
        from rich.text import Text

        _live_consoles[-1].print(Text.assemble((label, label_style), message), highlight=False, soft_wrap=True)
        return
    stream.write(f"{label}{message}\n")
    stream.flush()
