"""Which check commands are plain pytest invocations, and what they name.

A plain invocation is `pytest ARGS`, `py.test ARGS` or `python[3[.N]] -m pytest ARGS` with no shell
syntax at all (no `;`, `&&`, pipes, redirections, variables, globs): the shell would run exactly
these words. Such a check can be run together with others in one pytest process
(`orchestrator.run.checks.running.check_batch`), and must leave a pytest session's results behind
(`orchestrator.run.checks.running.pytest_outcomes`). Anything else is run as it is, one process per check.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from orchestrator.run.checks.shell_words import strict_shell_words

# Characters that make a command more than a list of words for bash (or a glob it expands).
_SHELL_SYNTAX = frozenset(";&|<>`$(){}*?[]!~#\\\n\r")
_PYTHON = re.compile(r"python(\d+(\.\d+)?)?")
# Options that take no value: several checks differing only in their paths can share a run.
_FLAGS = frozenset({
    "-q", "-qq", "-qqq", "-v", "-vv", "-vvv", "-s", "-x", "-l", "-ra", "-rA", "-rf", "-rfE", "-rN",
    "--quiet", "--verbose", "--exitfirst", "--showlocals", "--no-header", "--no-summary",
    "--strict-markers", "--strict-config", "--strict", "--disable-warnings", "--disable-pytest-warnings",
    "--capture=no", "--import-mode=importlib", "--import-mode=prepend", "--import-mode=append",
})
# Options whose value is the next word (so that word is not a path the check names).
_WITH_VALUE = frozenset({"-p", "-k", "-m", "-W", "-o", "--tb", "--maxfail", "--color", "--durations"})


@dataclass(frozen=True)
class PytestInvocation:
    """A plain pytest command, taken apart."""

    launcher: tuple[str, ...]
    """`("pytest",)` or `("python3", "-m", "pytest")`: how pytest is started."""
    options: tuple[str, ...]
    """Every option, with its value, in order."""
    targets: tuple[str, ...]
    """The paths and node ids it runs (`tests/test_a.py`, `tests/b.py::test_x`)."""
    combinable: bool
    """Whether every option is known, so the targets are surely the words that are not options."""

    def group_key(self) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
        """Checks with the same key may run in one pytest process; None: this one runs alone."""
        if not self.combinable or not self.targets:
            return None
        return self.launcher, self.options


def pytest_invocation(command: str | None) -> PytestInvocation | None:
    """`command` taken apart when it is a plain pytest invocation; else None."""
    if not command or _SHELL_SYNTAX & set(command):
        return None
    words = strict_shell_words(command)
    if words is None:
        return None
    launcher = _launcher(words)
    if launcher is None:
        return None
    options: list[str] = []
    targets: list[str] = []
    combinable = True
    rest = iter(words[len(launcher):])
    for word in rest:
        if not word.startswith("-") or word == "-":
            targets.append(word)
        elif word in _WITH_VALUE:
            options += [word, next(rest, "")]
        else:
            options.append(word)
            # `--opt=value` carries its value; a bare option not known may take the next word.
            combinable = combinable and (word in _FLAGS or ("=" in word and word.startswith("--")))
    return PytestInvocation(tuple(launcher), tuple(options), tuple(targets), combinable)


def _launcher(words: list[str]) -> list[str] | None:
    if not words:
        return None
    program = os.path.basename(words[0])
    if program in ("pytest", "py.test"):
        return words[:1]
    if _PYTHON.fullmatch(program) and words[1:3] == ["-m", "pytest"]:
        return words[:3]
    return None
