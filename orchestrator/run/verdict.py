"""How a run ended: its `Outcome` (the exit code follows from it), and the `RunResult` the
command reports; `run_verdict` judges a finished run from its features' statuses.

The runner turns what stopped it into an outcome (a limit: stopped; refused credentials:
auth_error; a bug: internal_error); the exit code of each outcome is the one of the error kind
that causes it (`orchestrator.user_errors`), and only the CLI ends the process with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from orchestrator.store.run_state import RunState
from orchestrator.user_errors import (
    EXIT_FAILED,
    EXIT_NEEDS_REVIEW,
    EXIT_OK,
    AuthError,
    Interrupted,
    OrchestrateError,
    StopError,
)


class Outcome(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    NEEDS_REVIEW = "needs_review"
    STOPPED = "stopped"
    INTERRUPTED = "interrupted"
    AUTH_ERROR = "auth_error"
    INTERNAL_ERROR = "internal_error"
    EMPTY = "empty"  # nothing selected: not a passed run, but nothing for CI to stop on

    @property
    def exit_code(self) -> int:
        return _EXIT_CODES[self]


_EXIT_CODES = {
    Outcome.PASSED: EXIT_OK, Outcome.EMPTY: EXIT_OK, Outcome.FAILED: EXIT_FAILED,
    Outcome.NEEDS_REVIEW: EXIT_NEEDS_REVIEW, Outcome.STOPPED: StopError.exit_code,
    Outcome.INTERRUPTED: Interrupted.exit_code, Outcome.AUTH_ERROR: AuthError.exit_code,
    Outcome.INTERNAL_ERROR: OrchestrateError.exit_code,
}


@dataclass(frozen=True)
class Verdict:
    """The outcome of a run and what it says to the user about it ("" when nothing)."""

    outcome: Outcome
    message: str = ""


@dataclass
class RunResult:
    """A finished run, for the reports and the command's exit code."""

    outcome: Outcome
    state: RunState = field(default_factory=RunState)
    selected: list[str] = field(default_factory=list)
    message: str = ""
    duration_ms: int = 0

    @property
    def exit_code(self) -> int:
        return self.outcome.exit_code


def run_verdict(statuses: Mapping[str, str]) -> Verdict:
    """All passed: passed (0). None failed, but some feature's check was reported defective:
    needs_review (4), saying what to do. Else failed (1; a feature blocked by one that needs
    review does not count as failed)."""
    if all(status == "passed" for status in statuses.values()):
        return Verdict(Outcome.PASSED)
    review = [fid for fid, status in statuses.items() if status == "needs_review"]
    if review and "failed" not in statuses.values():
        return Verdict(Outcome.NEEDS_REVIEW, (
            f"needs review: the agent reports the check of {', '.join(review)} is defective (its evidence is above "
            "and in `orchestrate status`); fix the check, then run `orchestrate run` again to retry"))
    return Verdict(Outcome.FAILED)
