"""How the command line presents itself: plain metavars in usage lines, one style for errors.

Typer writes a required argument as `{spec}` and an error from the parser as click's
"Error: Missing argument 'spec'." under a usage block. Ours are written like every other
error the program prints: `orchestrate: error: <what>; see: orchestrate run --help`.
"""

from __future__ import annotations

import sys
from typing import Any

from typer.core import TyperArgument, TyperCommand, TyperGroup

try:  # newer typer carries its own copy of click; older ones use the click package
    from typer import _click as click
except ImportError:  # pragma: no cover - depends on the installed typer
    import click  # type: ignore[no-redef]

# What the parser raises for a bad command line.
ClickException = click.ClickException

PROG_NAME = "orchestrate"


class Interrupted(Exception):
    """Ctrl-C or SIGTERM inside a command that did not handle it itself (exit 130)."""


class _Argument(TyperArgument):
    def display_type_rich(self, ctx: Any) -> str | None:
        return None  # its metavar (SPEC, ID) says what it is; no `<path>` beside it


class Command(TyperCommand):
    """A command whose usage line and help name arguments by their metavar: `run [OPTIONS] SPEC`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            if type(param) is TyperArgument:
                param.__class__ = _Argument

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if param.param_type_name == "argument":
                name = param.metavar or (param.name or "").upper()
                pieces.append(name if param.required else f"[{name}]")
        return pieces


class Group(TyperGroup):
    """The `orchestrate` group: an interrupt that escapes a command ends with one line, not silence."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            # Typer would turn it into a bare exit 130; the caller says "interrupted".
            raise Interrupted() from None


def usage_error_line(err: click.ClickException) -> str:
    """A parser error as one line in the program's own style, pointing at the right --help."""
    message = err.format_message().strip().rstrip(".")
    if message[:1].isupper() and message[1:2].islower():
        message = message[0].lower() + message[1:]
    ctx = getattr(err, "ctx", None)
    where = ctx.command_path if ctx is not None else PROG_NAME
    return f"{PROG_NAME}: error: {message}; see: {where} --help"


def show_usage_error(err: click.ClickException) -> int:
    """Print a parser error (or, for a bare `orchestrate`, the help) and return the exit code."""
    if isinstance(err, click.exceptions.NoArgsIsHelpError):
        sys.stderr.write(err.format_message() + "\n")  # `orchestrate` alone: no command, so the help
        return err.exit_code
    sys.stderr.write(usage_error_line(err) + "\n")
    return err.exit_code
