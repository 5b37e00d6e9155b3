"""The errors a user sees and the exit codes they end in.

Library code raises; it never exits. `orchestrator.cli.commands` alone turns an exception into an
exit code and one line on stderr (`orchestrate: error: <what>`). A `UsageError` is something
the user can fix and run again (a bad spec, a missing project, a run already going): exit 2.
"""

from __future__ import annotations

# As the README's exit codes table lists them.
EXIT_OK = 0  # every selected feature passed (or nothing was selected)
EXIT_FAILED = 1  # the run finished and some feature failed or was blocked
EXIT_USAGE = 2  # bad usage, spec or configuration, or the API refused the key or model
EXIT_STOPPED = 3  # stopped early by a limit or an API that stayed unreachable; state saved
EXIT_NEEDS_REVIEW = 4  # the run finished, none failed, and some feature's check was reported defective
EXIT_INTERRUPTED = 130  # SIGINT or SIGTERM; state saved
EXIT_INTERNAL = 70  # a bug in orchestrate (sysexits' EX_SOFTWARE); state saved, resumable, to be reported


class UsageError(Exception):
    """Something the user can fix: the message says what, and what to do next (exit 2)."""

    exit_code = EXIT_USAGE
