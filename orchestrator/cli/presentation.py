"""How the command line presents itself: plain metavars in usage lines, one style for errors.

Typer writes a required argument as `{spec}` and an error from the parser as click's
"Error: Missing argument 'spec'." under a usage block. Ours are written like every other
error the program prints: `orchestrate: error: <what>; see: orchestrate run --help`.
"""

from __future__ import annotations

import sys
from typing import Any

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup

from orchestrator.user_errors import EXIT_USAGE, Interrupted

# What the parser raises for a bad command line: typer (0.28 on) publishes the base class of
# its parser's errors; the parser itself is typer's own business, so nothing else of it is named.
ParserError = typer.TyperException

PROG_NAME = "orchestrate"


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

    def get_short_help_str(self, limit: int = 45) -> str:
        """The command's summary in the top-level help: its first sentence whole, never cut with "..."
        (the help formatter wraps it to the terminal's width)."""
        text = (self.short_help or self.help or "").strip().split("\n\n")[0]
        return " ".join(text.split())

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

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if not args and self.no_args_is_help and not ctx.resilient_parsing:
            # `orchestrate` alone: the help, on stderr, as a usage error (exit 2).
            sys.stderr.write(ctx.get_help() + "\n")
            raise typer.Exit(EXIT_USAGE)
        result: list[str] = super().parse_args(ctx, args)
        return result


def usage_error_line(err: ParserError) -> str:
    """A parser error as one line in the program's own style, pointing at the right --help."""
    message = err.format_message().strip().rstrip(".")
    if message[:1].isupper() and message[1:2].islower():
        message = message[0].lower() + message[1:]
    ctx = getattr(err, "ctx", None)
    where = ctx.command_path if ctx is not None else PROG_NAME
    # The parser's "no such command 'x'. Did you mean 'y'?" ends with its own question: a
    # question is followed by a new sentence, not by "; see:".
    message = message.replace(". Did you mean ", "; did you mean ")
    if message.endswith("?"):
        return f"{PROG_NAME}: error: {message} See: {where} --help"
    return f"{PROG_NAME}: error: {message}; see: {where} --help"


def show_usage_error(err: ParserError) -> int:
    """Print a parser error as one line and return the exit code."""
    sys.stderr.write(usage_error_line(err) + "\n")
    return err.exit_code
