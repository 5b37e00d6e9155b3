"""The program's errors, one root (`OrchestrateError`), and the exit codes, named here alone.

Library code raises; it never exits. `orchestrator.cli.commands.main` alone turns an error into
an exit code and one line on stderr (`orchestrate: error: <what>`), by the error's `exit_code`.
The kinds a user meets: `UsageError` (something to fix, then run again: exit 2), `AuthError`
(the API refused the key or the model: exit 2), `StopError` (stopped early by a limit, an API
that stayed away or git: exit 3, resumable) and `Interrupted` (Ctrl-C or SIGTERM: exit 130).
Every other error is the program's own business (exit 70 if one ever reaches the CLI).
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


class OrchestrateError(Exception):
    """The root of every error the program raises; `exit_code` is how a command it ends ends."""

    exit_code = EXIT_INTERNAL


class UsageError(OrchestrateError):
    """Something the user can fix: the message says what, and what to do next (exit 2)."""

    exit_code = EXIT_USAGE


class AuthError(OrchestrateError):
    """The API refused the credentials or the model (exit 2)."""

    exit_code = EXIT_USAGE


class StopError(OrchestrateError):
    """The run cannot go on now but can resume later: a cap, an API that stayed away, git (exit 3)."""

    exit_code = EXIT_STOPPED


class Interrupted(OrchestrateError):
    """Ctrl-C or SIGTERM inside a command that did not handle it itself (exit 130)."""

    exit_code = EXIT_INTERRUPTED
