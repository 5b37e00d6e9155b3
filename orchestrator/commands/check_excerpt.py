"""The first meaningful lines of a failed check's output: what a reader needs to see first.

pytest's progress dots, separators and headers say nothing; its `E   ` lines, the
`FAILED ...` summary, an `Error:` or a traceback's last line do. Shared by the live view
(under a FAILED line) and the HTML report (the last failure's excerpt).
"""

from __future__ import annotations

import re

_NOISE = re.compile(r"^(?:[.sxFE]+\s*(?:\[\s*\d+%\])?|[=_-]{3,}.*|\s*)$")
# Best first: the error itself, then which tests failed, then anything else error-shaped.
_SIGNALS = (
    re.compile(r"^(?:E\s+)?[\w.]*(?:Error|Exception|Exit)\b"),
    re.compile(r"^(?:FAILED|ERROR)\b"),
    re.compile(r"^(?:Traceback|.*:\d+: \w*Error|error\b|fatal\b)", re.IGNORECASE),
)


# The regression guard's verdict is written to the agent ("your change ..., fix your change ...");
# the user reads it as what happened, and that the agent was told.
_TO_THE_AGENT = re.compile(
    r"^your change broke feature (?P<rest>.*?); fix your change so that check passes again, without editing that check$",
    re.DOTALL,
)


def for_the_user(error: str | None) -> str | None:
    """A check's error as the user reads it: a sentence addressed to the agent is told about, not quoted."""
    match = _TO_THE_AGENT.match(error or "")
    if match is None:
        return error
    return f"the attempt broke feature {match['rest']}; the agent was sent back to fix its change, not that check"


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
