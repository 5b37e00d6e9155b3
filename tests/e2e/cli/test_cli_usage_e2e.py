"""What a user sees of the command line itself: help, usage errors, bad settings.

Help names every value by what it is (SPEC, ID, N, PATH), every parser error reads like
every other error (`orchestrate: error: ...`, exit 2), and a number that is not finite is
refused before anything runs, whether it comes from a flag, the environment or the file.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli, write_spec

COMMANDS = ["run", "validate", "status", "logs", "context", "summarize"]


# --- help ----------------------------------------------------------------------------------


def help_of(project: Path, *command: str) -> str:
    result = run_cli([*command, "--help"], project, None)
    assert result.code == 0, result.stderr
    return result.stdout


def test_help_names_values_by_what_they_are(project):
    texts = {command: help_of(project, command) for command in COMMANDS}

    run_help = texts["run"]
    assert "Usage: orchestrate run [OPTIONS] SPEC" in run_help
    for shown in ("--reset ID", "--only ID,...", "--shard I/N", "--max-cost USD", "--max-turns N",
                  "--project-dir DIR", "--report PATH", "--model ID", "--context STRATEGY"):
        assert shown in run_help, f"{shown!r} not in run --help"
    assert "Usage: orchestrate validate [OPTIONS] SPEC" in texts["validate"]
    assert "Usage: orchestrate logs [OPTIONS] [ID]" in texts["logs"]
    assert "Usage: orchestrate context [OPTIONS] [FEATURE]" in texts["context"]
    for command, text in texts.items():
        # No typer-isms: `{spec}`, `<list[str]>`, `<str>`, or a default of 0 for a counter.
        assert not re.search(r"\{\w+\}|<[\w\[\]]+>|\[default: 0\]", text), f"{command} --help:\n{text}"


def test_the_bare_command_shows_the_commands(project):
    result = run_cli([], project, None)
    assert result.code == 2
    assert "Usage: orchestrate [OPTIONS] COMMAND" in result.stderr and "validate" in result.stderr


# --- usage errors: one style ---------------------------------------------------------------


@pytest.mark.parametrize("args, says", [
    (["run"], "missing argument 'SPEC'; see: orchestrate run --help"),
    (["run", "spec.json", "--bogus"], "no such option: --bogus"),
    (["run", "spec.json", "--max-turns", "many"], "invalid value for '--max-turns'"),
    (["frobnicate"], "no such command 'frobnicate'; see: orchestrate --help"),
    # A question ends its sentence: no "?; see:".
    (["stauts"], "no such command 'stauts'; did you mean 'status'? See: orchestrate --help"),
    (["validate"], "missing argument 'SPEC'; see: orchestrate validate --help"),
])
def test_usage_errors_read_like_every_other_error(project, args, says):
    result = run_cli(args, project, None)

    assert result.code == 2
    assert result.stderr.startswith("orchestrate: error: "), result.stderr
    assert says in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "Error:" not in result.stderr and "Usage:" not in result.stderr and "Traceback" not in result.stderr


def test_a_misspelt_setting_gets_a_suggestion(project):
    spec = write_spec(project, 1)
    (project / "orchestrate.toml").write_text("max_cots = 1\n[security]\ndenny = []\n")

    result = run_cli(["run", str(spec), "--dry-run"], project, None)

    assert result.code == 2
    assert "unknown setting 'max_cots'; did you mean \"max_cost\"?" in result.stderr
    assert "unknown setting 'security.denny'; did you mean \"deny\"?" in result.stderr


@pytest.mark.parametrize("dry_run", [False, True])
def test_a_bad_deny_regex_stops_the_run_before_anything_runs(fake_api, project, dry_run):
    spec = write_spec(project, 1)
    (project / "orchestrate.toml").write_text("[security]\ndeny = ['npm publish', '(']\n")

    result = run_cli(["run", str(spec), *(["--dry-run"] if dry_run else [])], project, fake_api)

    assert result.code == 2, (result.code, result.stderr)
    assert "security.deny" in result.stderr and "bad shell deny pattern '('" in result.stderr
    assert "Traceback" not in result.stderr
    assert not fake_api.requests, "nothing may be sent to the model"
    assert not (project / ".autonomous").exists(), "nothing may be written"


# --- numbers that are not finite -----------------------------------------------------------

NOT_FINITE = ["inf", "1e309", "nan", "-inf"]


@pytest.mark.parametrize("value", NOT_FINITE)
def test_a_cost_cap_that_is_not_a_finite_number_is_refused_before_anything_runs(fake_api, project, value):
    spec = write_spec(project, 1)

    result = run_cli(["run", str(spec), "--max-cost", value], project, fake_api)

    assert result.code == 2, (result.code, result.stderr)
    assert "--max-cost" in result.stderr and "not a finite number" in result.stderr
    assert "Traceback" not in result.stderr and "OverflowError" not in result.stderr
    assert not fake_api.requests, "nothing may be sent to the model"
    assert not (project / ".autonomous").exists(), "nothing may be written"


@pytest.mark.parametrize("source", ["environment", "orchestrate.toml"])
def test_environment_and_file_refuse_infinity_too(fake_api, project, source):
    spec = write_spec(project, 1)
    if source == "environment":
        extra = {"ORCHESTRATE_MAX_COST": "1e309"}
    else:
        (project / "orchestrate.toml").write_text("max_cost = inf\n")
        extra = {}

    result = run_cli(["run", str(spec)], project, fake_api, **extra)

    assert result.code == 2, (result.code, result.stderr)
    assert f"{source}: max_cost:" in result.stderr and "not a finite number" in result.stderr
    assert not fake_api.requests and not (project / ".autonomous").exists()


def test_a_price_that_is_not_finite_or_is_negative_is_refused(project):
    spec = write_spec(project, 1)
    (project / "orchestrate.toml").write_text(
        '[pricing.sonnet]\ninput = nan\noutput = 15\ncache_read = 0.3\ncache_write = -1\n'
    )

    result = run_cli(["run", str(spec), "--dry-run"], project, None)

    assert result.code == 2
    assert "pricing: sonnet.input = nan: a price must be a finite number >= 0" in result.stderr


# --- where errors become exit codes --------------------------------------------------------


