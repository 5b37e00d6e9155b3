"""The first meaningful lines of a failed check's output: what a reader needs to see first.

pytest's progress dots, separators and headers say nothing; its `E   ` lines, the
`FAILED ...` summary, an `Error:` or a traceback's last line do. Every surface that shows a
failed check takes its lines from here, wherever the check ran (a feature's attempt, the
regression guard, final verification, `verify`, `combine`): the console, `orchestrate logs ID`,
the HTML report, JUnit, the step summary, and the reason a regressed feature's state keeps
(which the next attempt's prompt carries). `check_verdict` is the one way a result is named.
"""

from __future__ import annotations

import re
from typing import Protocol

from orchestrator.store.agent_words import for_the_user

_NOISE = re.compile(r"^(?:[.sxFE]+\s*(?:\[\s*\d+%\])?|[=_-]{3,}.*|\s*)$")
# Best first: the error itself, then which tests failed, then anything else error-shaped.
_SIGNALS = (
    re.compile(r"^(?:E\s+)?[\w.]*(?:Error|Exception|Exit)\b"),
    re.compile(r"^E\s{2,}\S"),  # pytest's explanation of a failed assertion: `E       assert 0 == 3`
    re.compile(r"^(?:FAILED|ERROR)\b"),
    re.compile(r"^(?:Traceback|.*:\d+: \w*Error|error\b|fatal\b)", re.IGNORECASE),
)


def error_excerpt(output: str | None, error: str | None = None, max_lines: int = 4, width: int = 160) -> list[str]:
    """Up to `max_lines` lines explaining a failure: `error` first, then the output's signal lines.

    When no line of the output looks like an error, its last non-noise lines stand in.
    """
    lines: list[str] = []
    error = for_the_user(error)
    if error:
        lines.append(error.strip().splitlines()[0] if error.strip() else "")
    text_lines = (output or "").splitlines()
    signal = [line.rstrip() for pattern in _SIGNALS for line in text_lines if pattern.match(line.strip())]
    if not signal:
        signal = [line.rstrip() for line in text_lines if not _NOISE.match(line)][-max_lines:]
    for line in signal:
        if line and line not in lines:
            lines.append(line)
        if len(lines) >= max_lines:
            break
    return [line if len(line) <= width else line[: width - 1] + "…" for line in lines if line]


class _Checked(Protocol):
    @property
    def success(self) -> bool: ...
    @property
    def exit_code(self) -> int | None: ...
    @property
    def refused_by(self) -> str | None: ...


def check_verdict(check: _Checked, passed: str = "passed") -> str:
    """`passed`, `FAILED (exit 1)`, or, for an attempt refused before its check decided (it has no
    exit status), what refused it: `REFUSED by the protected-files guard`."""
    if check.success:
        return passed
    if check.refused_by:
        return f"REFUSED by {check.refused_by}"
    return f"FAILED (exit {check.exit_code})" if check.exit_code is not None else "FAILED (no exit status)"


def failure_reason(output: str | None, error: str | None, exit_code: int | None) -> str:
    """One line for a failed check in a reason (`status`, JUnit's message, the next prompt):
    `exit code 1: E   assert 0 == 3`, or the error that says more than the exit code."""
    lines = error_excerpt(output, error, max_lines=1)
    code = f"exit code {exit_code}" if exit_code is not None else "no exit status"
    if error:
        return lines[0] if lines else code
    return f"{code}: {lines[0].strip()}" if lines else code
