"""Feature cli: `python -m textkit COMMAND ...` and the `textkit` console script."""

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import textkit
from textkit.cli import main


def run(*args, stdin=""):
    return subprocess.run(
        [sys.executable, "-m", "textkit", *args],
        input=stdin, capture_output=True, text=True, timeout=60,
    )


def test_python_m_textkit():
    result = run("slugify", "Hello World!")
    assert (result.returncode, result.stdout) == (0, "hello-world\n")


def test_text_from_stdin():
    result = run("case", "snake", stdin="someVariableName\n")
    assert (result.returncode, result.stdout) == (0, "some_variable_name\n")


def test_version():
    result = run("--version")
    assert (result.returncode, result.stdout) == (0, f"textkit {textkit.__version__}\n")


@pytest.mark.parametrize("args", [(), ("shout", "x"), ("case", "upper", "x")])
def test_usage_errors(args):
    result = run(*args)
    assert result.returncode == 2
    assert result.stdout == "" and result.stderr


@pytest.mark.parametrize(
    ("argv", "out"),
    [
        (["slugify", "Hello World", "--separator", "_"], "hello_world\n"),
        (["wrap", "--width", "10", "The quick brown fox"], "The quick\nbrown fox\n"),
        (["case", "camel", "hello big world"], "helloBigWorld\n"),
        (["case", "kebab", "HTTPServer"], "http-server\n"),
        (["truncate", "--length", "8", "Hello, world"], "Hello...\n"),
        (["truncate", "--length", "14", "--whole-words", "The quick brown fox"], "The quick...\n"),
    ],
)
def test_commands(argv, out, capsys):
    assert main(argv) == 0
    assert capsys.readouterr().out == out


def test_stats_prints_json(capsys):
    assert main(["stats", "Hello world. Bye!"]) == 0
    assert json.loads(capsys.readouterr().out) == textkit.text_stats("Hello world. Bye!")


def test_console_script():
    data = tomllib.loads(Path("pyproject.toml").read_text(encoding="utf-8"))
    assert data["project"]["scripts"]["textkit"] == "textkit.cli:main"
