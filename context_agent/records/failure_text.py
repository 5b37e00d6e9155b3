"""Turning a failed check's output into a one-line failure description and a default
prevention, both short enough to be injected whole."""

from __future__ import annotations

import re

from context_agent.budget import FAILURE_DESCRIPTION_TOKENS, PREVENTION_TOKENS
from context_agent.text import clip_item, one_line
from shared_base.check_result import CheckResult
from shared_base.tokens import estimate_tokens

# Lines that usually carry the cause of a failure, in the order tools print them.
_ERROR_LINE = re.compile(
    r"error|exception|failed|failure|assert|fatal|cannot|can't|could not|not found|no such|"
    r"undefined|refused|timed? ?out|panic|expected|missing|denied|invalid",
    re.IGNORECASE,
)
# Lines that look like errors but say nothing: banners, separators, traceback headers.
_NOISE_LINE = re.compile(
    r"^(traceback \(most recent call last\)|during handling of the above exception|"
    r"=+.*=+|-+|_+.*_+|short test summary info|\d+ (failed|error).*in [\d.]+s.*)$",
    re.IGNORECASE,
)
_PYTEST_E_PREFIX = re.compile(r"^E\s+")
# Lines that name the error itself: `ValueError: ...`, pytest's `E ...` and `FAILED ...`.
_STRONG_LINE = re.compile(r"^(FAILED|ERROR)\b|\b\w*(Error|Exception)\b:|^error(\[\w+\])?:")
_MAX_LINES = 2
# pytest's names of failing tests: `FAILED path::test - ...` (its short summary) or `path::test FAILED` (-v).
_FAILED_TEST = re.compile(r"^(?:FAILED|ERROR) (\S+::\S+)|^(\S+::\S+) (?:FAILED|ERROR)\b")
# A command longer than this is left out of the description; the error line matters more.
_MAX_COMMAND_TOKENS = 8


def describe_check_failure(check: CheckResult) -> str:
    """"`<command>` failed: <first meaningful error line(s)>", bounded for injection."""
    command = one_line(check.command or "")
    if check.skipped:
        reason = one_line(check.error or "no command to run")
        return clip_item(f"check skipped: {reason}", FAILURE_DESCRIPTION_TOKENS)
    lines = _error_lines(check) or [_exit_text(check)]
    tests = _failing_tests(check.output or "")
    if tests:  # which test failed, and its main error line: what a later feature can act on
        more = f" (and {len(tests) - 1} more)" if len(tests) > 1 else ""
        main = next((line for line in lines if not _FAILED_TEST.match(line)), lines[0])
        return clip_item(f"{tests[0]}{more} failed: {main}", FAILURE_DESCRIPTION_TOKENS)
    short_command = command and estimate_tokens(command) <= _MAX_COMMAND_TOKENS
    prefix = f"`{command}` failed: " if short_command else ""
    # Whole lines while they fit; only the first is ever clipped.
    detail = lines[0]
    for line in lines[1:]:
        if estimate_tokens(f"{prefix}{detail}; {line}") <= FAILURE_DESCRIPTION_TOKENS:
            detail = f"{detail}; {line}"
    if estimate_tokens(prefix + detail) > FAILURE_DESCRIPTION_TOKENS:
        prefix = ""
    return clip_item(prefix + detail, FAILURE_DESCRIPTION_TOKENS)


def default_prevention(check: CheckResult) -> str:
    """What to do until something better is learned: run the check before reporting done."""
    command = one_line(check.command or "")
    prevention = f"make `{command}` pass before reporting done"
    if command and estimate_tokens(prevention) <= PREVENTION_TOKENS:
        return prevention
    return "make the check pass before reporting done"


def _failing_tests(output: str) -> list[str]:
    """The failing pytest tests the output names, in order, each once."""
    found: list[str] = []
    for line in output.splitlines():
        match = _FAILED_TEST.match(line.strip())
        if match and (name := match.group(1) or match.group(2)) not in found:
            found.append(name)
    return found


def _error_lines(check: CheckResult) -> list[str]:
    text = "\n".join((check.output or "", check.error or ""))
    strong: list[str] = []
    weak: list[str] = []
    last = ""
    for raw in text.splitlines():
        line = raw.strip()
        # `>` lines are pytest echoing the source, not the error.
        if not line or line.startswith(">") or _NOISE_LINE.match(line):
            continue
        last = line
        if _PYTEST_E_PREFIX.match(raw.lstrip()) or _STRONG_LINE.search(line):
            _add_once(strong, _PYTEST_E_PREFIX.sub("", line))
        elif _ERROR_LINE.search(line):
            _add_once(weak, line)
    # Without any recognisable error word the last line is usually the verdict.
    return (strong or weak or ([last] if last else []))[:_MAX_LINES]


def _add_once(lines: list[str], line: str) -> None:
    # pytest repeats the error in its summary line ("FAILED test - AttributeError: ...").
    if not any(seen in line or line in seen for seen in lines):
        lines.append(line)


def _exit_text(check: CheckResult) -> str:
    code = check.exit_code
    return f"exit code {code}, no output" if code is not None else "no exit code, no output"
