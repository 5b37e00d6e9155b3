"""What the checks need from the machine, found before any model call.

A check such as `python3 -m pytest ...` fails on every attempt when the `python3` on the
checks' PATH cannot import pytest, and each attempt costs model calls before that shows. This
module reads the interpreter and the module out of each check command and asks that
interpreter once, so `demo` and `doctor` can say in one line what is missing.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

# `python3 -B -m pytest`, `python -m unittest`, `python3.12 -m mypy`: the interpreter and the module.
_PYTHON_MODULE = re.compile(
    r"(?:^|[\s;&|(])(python(?:3(?:\.\d+)?)?)((?:\s+-(?!m\b)[A-Za-z]+)*)\s+-m\s+([A-Za-z_][\w]*)"
)
_PROBE_TIMEOUT = 30.0


def python_modules_called(command: str) -> list[tuple[str, str]]:
    """The (interpreter, top-level module) pairs that `command` runs with `-m`."""
    return [(match.group(1), match.group(3)) for match in _PYTHON_MODULE.finditer(command)]


def missing_check_tools(commands: Iterable[str | None], env: Mapping[str, str]) -> list[str]:
    """One sentence for each interpreter or module the checks call that this machine lacks."""
    pairs = sorted({pair for command in commands if command for pair in python_modules_called(command)})
    problems = []
    for interpreter, module in pairs:
        problem = module_problem(interpreter, module, env)
        if problem:
            problems.append(problem)
    return problems


def module_problem(interpreter: str, module: str, env: Mapping[str, str]) -> str | None:
    """Why `interpreter -m module` cannot run with `env`'s PATH, or None when it can."""
    found = shutil.which(interpreter, path=env.get("PATH", ""))
    if found is None:
        return f"a check that runs `{interpreter} -m {module}` fails here: no `{interpreter}` is on the PATH"
    if _imports(found, module, env):
        return None
    here = Path(sys.executable)
    if found != str(here) and _imports(str(here), module, env):
        # orchestrate's own Python has it (pytest is one of its dependencies): the PATH finds another.
        activate = here.parent / "activate"
        advice = (f"activate the virtualenv orchestrate runs in (`source {activate}`)" if activate.exists()
                  else f"put {here.parent} first on the PATH")
    else:
        advice = f"install it there (`{found} -m pip install {module}`)"
    return f"a check that runs `{interpreter} -m {module}` fails here: {found} cannot import {module}; {advice}"


def _imports(interpreter: str, module: str, env: Mapping[str, str]) -> bool:
    probe = f"import importlib.util, sys; sys.exit(importlib.util.find_spec({module!r}) is None)"
    try:
        result = subprocess.run(
            [interpreter, "-c", probe], env=dict(env), capture_output=True, timeout=_PROBE_TIMEOUT, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return result.returncode == 0
