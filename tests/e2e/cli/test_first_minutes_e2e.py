"""A new user's first minutes: `doctor` and `demo` say up front what a run here would lack.

A check that runs `python3 -m pytest` with a `python3` that cannot import pytest fails every
attempt, each after paid model calls: both commands find it before any call. `doctor` exits 2
when a run could not start (no key), as the README says.
"""

from __future__ import annotations

import os
from pathlib import Path

from orchestrator.run.checks.running.check_tools import missing_check_tools, python_modules_called
from tests.cli_helpers import run_cli


def python3_without_pytest(tmp_path: Path) -> str:
    """A PATH whose first `python3` imports nothing (a system Python without pytest, say)."""
    stub = tmp_path / "bin"
    stub.mkdir()
    (stub / "python3").write_text("#!/bin/sh\nexit 1\n")
    (stub / "python3").chmod(0o755)
    return f"{stub}{os.pathsep}{os.environ['PATH']}"


def test_doctor_exits_2_without_a_key(tmp_path: Path) -> None:
    result = run_cli(["doctor"], tmp_path, key=None, ORCHESTRATE_SANDBOX="none")
    assert result.code == 2, result.stdout + result.stderr
    assert "api key" in result.stdout and "not set" in result.stdout


def test_doctor_names_a_bad_deny_regex_as_bad_configuration(tmp_path: Path) -> None:
    (tmp_path / "orchestrate.toml").write_text("[security]\ndeny = ['(']\n")

    result = run_cli(["doctor"], tmp_path, ORCHESTRATE_SANDBOX="none")

    assert result.code == 2, result.stdout + result.stderr
    line = next(line for line in result.stdout.splitlines() if line.startswith("configuration"))
    assert "security.deny" in line and "bad shell deny pattern '('" in line


def test_doctor_says_when_the_checks_python3_cannot_import_pytest(tmp_path: Path) -> None:
    path = python3_without_pytest(tmp_path)

    result = run_cli(["doctor"], tmp_path, ORCHESTRATE_SANDBOX="none", PATH=path)

    line = next(line for line in result.stdout.splitlines() if line.startswith("checks' python3"))
    assert f"{tmp_path}/bin/python3 cannot import pytest" in line
    assert "activate the virtualenv orchestrate runs in" in line or "install it there" in line
    ok = run_cli(["doctor"], tmp_path, ORCHESTRATE_SANDBOX="none")
    assert "imports pytest" in next(line for line in ok.stdout.splitlines() if line.startswith("checks' python3"))


def test_the_demo_refuses_in_one_line_before_any_model_call_when_pytest_is_missing(tmp_path: Path) -> None:
    result = run_cli(["demo", "--dir", "d"], tmp_path, key=None, PATH=python3_without_pytest(tmp_path))

    assert result.code == 2, result.stdout + result.stderr
    assert result.stderr.count("\n") == 1 and "cannot import pytest" in result.stderr, result.stderr
    assert "python3 -m pytest" in result.stderr
    assert "[1/8]" not in result.stdout and not (tmp_path / "d" / "textkit" / ".autonomous").exists()


def test_the_interpreter_and_module_are_read_from_each_check_command() -> None:
    command = 'PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python3 -B -m pytest -q "$ORCHESTRATE_SPEC_DIR/checks/test_a.py"'
    assert python_modules_called(command) == [("python3", "pytest")]
    assert python_modules_called("cd sub && python -m unittest discover; python3.12 -m mypy .") == [
        ("python", "unittest"), ("python3.12", "mypy")]
    assert python_modules_called("pytest -q && make test") == []


def test_missing_modules_are_named_once_per_interpreter(tmp_path: Path) -> None:
    env = {"PATH": python3_without_pytest(tmp_path)}
    problems = missing_check_tools(["python3 -m pytest a.py", "python3 -B -m pytest b.py", None], env)
    assert len(problems) == 1 and "cannot import pytest" in problems[0]
    assert missing_check_tools(["python3 -m pytest"], {"PATH": str(tmp_path / "empty")}) == [
        "a check that runs `python3 -m pytest` fails here: no `python3` is on the PATH"]
