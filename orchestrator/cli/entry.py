"""The console entry point: signal handling first, then the command line.

Importing the command line takes a while (typer, rich, pydantic, the SDK: up to seconds on a
busy machine). Ctrl-C or SIGTERM in that time must end the program as it would a moment
later: exit 130, one line, no traceback. So this module imports nothing but the standard
library's signal handling and the exit codes (`orchestrator.user_errors`, standard library only)
before the handlers are in place.
"""

import os
import signal

from orchestrator.user_errors import EXIT_INTERRUPTED


def _interrupted_while_starting(_signum: int, _frame: object) -> None:
    # Nothing has been written yet, so nothing is left to save or flush: leave now, rather
    # than raise through half-finished imports.
    os.write(2, b"orchestrate: interrupted\n")
    os._exit(EXIT_INTERRUPTED)


def main() -> None:
    """Console-script entry point (`orchestrate`, `python -m orchestrator`)."""
    # `orchestrator.cli.commands.main` replaces these with handlers that let a run save its state.
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _interrupted_while_starting)
    from orchestrator.cli.commands import main as cli_main

    cli_main()
