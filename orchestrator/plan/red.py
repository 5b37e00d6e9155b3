"""The red check: run a check on the tree before its feature exists, and judge why it fails.

Test-first means the check fails now and passes once the feature is built. Run on the
current tree, a check is one of:
- `red`: it fails for the right reason: an assertion, or an import of the module the feature
  is to build (`ModuleNotFoundError`, `ImportError`, `AttributeError`, `NotImplementedError`);
- `vacuous`: it already passes, so it cannot tell whether the feature was built;
- `broken`: it fails for the wrong reason: a syntax error in the check, a fixture or a test
  helper that does not exist, a command or test file not found, no test collected, a timeout.
The judgement reads the exit code and the runner's output; it knows pytest's conventions
(exit 2 collection error, 4 usage error, 5 nothing collected) and falls back to generic ones.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from orchestrator.run.checks.running.check_command import run_check
from orchestrator.safety.environment import CommandEnvironment
from shared_base.check_result import CheckResult

Verdict = Literal["red", "vacuous", "broken"]

_WRONG_REASONS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(SyntaxError|IndentationError|TabError)\b"), "a syntax error"),
    (re.compile(r"fixture '([^']+)' not found"), "a fixture that does not exist"),
    (re.compile(r"file or directory not found|can't open file"), "a file the command names does not exist"),
    (re.compile(r"\bno tests ran\b|collected 0 items|Ran 0 tests", re.IGNORECASE), "no test was collected"),
    (re.compile(r"command not found"), "a command that does not exist"),
)
# A missing module is the feature not being built yet, unless it is a test helper the check relies on.
_MISSING_MODULE = re.compile(r"No module named '([^']+)'")
_HELPER_MODULE = re.compile(r"^(tests?|conftest|fixtures?|helpers?|testing)(\.|$)|(^|\.)(conftest|fixtures?)$")


@dataclass(frozen=True)
class RedCheck:
    """One check run on the current tree, judged."""

    verdict: Verdict
    reason: str
    result: CheckResult


def judge(result: CheckResult) -> tuple[Verdict, str]:
    """The verdict on one run of a check, and a short reason a reviewer can read."""
    if result.success:
        return "vacuous", "it passes before the feature is built"
    code = result.exit_code
    if code is None or code in (126, 127) or code < 0:
        return "broken", result.error or "the check could not run to the end"
    output = result.output
    for pattern, reason in _WRONG_REASONS:
        if pattern.search(output):
            return "broken", reason
    if result.exit_code in (4, 5) and "pytest" in (result.command or ""):
        return "broken", "pytest could not run the tests (usage error or nothing collected)"
    for module in _MISSING_MODULE.findall(output):
        if _HELPER_MODULE.search(module):
            return "broken", f"it imports a test helper that does not exist ({module})"
    missing = _MISSING_MODULE.search(output)
    if missing:
        return "red", f"the module {missing.group(1)} is not built yet"
    return "red", f"it fails (exit {result.exit_code})"


def red_check(command: str, environment: CommandEnvironment, *, timeout: float) -> RedCheck:
    """Run `command` in `environment` (the project, in the run's sandbox) and judge it."""
    result = run_check(command, environment, attempt=0, timeout=timeout)
    verdict, reason = judge(result)
    return RedCheck(verdict, reason, result)


def syntax_problems(files: Mapping[str, str]) -> list[str]:
    """Python files among `files` (path -> content) that do not even compile."""
    problems = []
    for path, content in files.items():
        if not path.endswith(".py"):
            continue
        try:
            compile(content, path, "exec")
        except SyntaxError as err:
            problems.append(f"{path}:{err.lineno}: SyntaxError: {err.msg}")
        except ValueError as err:  # a NUL byte
            problems.append(f"{path}: {err}")
    return problems
