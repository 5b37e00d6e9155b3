"""What a newcomer trips over in the first hour (issue 43), driven through the real CLI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.cli_helpers import run_cli, write_spec


@pytest.mark.parametrize("command", [["run", "spec.json"], ["plan", "idea.md", "-o", "planned.json"]])
def test_a_newline_in_the_base_url_is_one_line_and_exit_2_before_any_work(command: list[str], tmp_path: Path) -> None:
    write_spec(tmp_path, 1)
    (tmp_path / "idea.md").write_text("# A widget\n\nA tiny widget library.\n")

    result = run_cli(command, tmp_path, ANTHROPIC_BASE_URL="http://127.0.0.1:9\n")

    assert result.code == 2, result.stdout + result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    assert "ANTHROPIC_BASE_URL" in result.stderr and "a newline" in result.stderr
    assert not (tmp_path / ".autonomous").exists() and not (tmp_path / "planned.json").exists()


@pytest.mark.parametrize(("provider", "variables", "named"), [
    ("vertex", {"CLOUD_ML_REGION": "us-east5\n", "ANTHROPIC_VERTEX_PROJECT_ID": "p-1", "GOOGLE_OAUTH_ACCESS_TOKEN": "t"},
     "CLOUD_ML_REGION"),
    ("bedrock", {"AWS_REGION": "us-east-1", "AWS_SECRET_ACCESS_KEY": "abc\x1b", "AWS_ACCESS_KEY_ID": "AKIA0"},
     "AWS_SECRET_ACCESS_KEY"),
], ids=["vertex region", "bedrock secret"])
def test_a_malformed_cloud_variable_is_one_line_and_exit_2_before_any_work(
    provider: str, variables: dict[str, str], named: str, tmp_path: Path,
) -> None:
    write_spec(tmp_path, 1)
    result = run_cli(["run", "spec.json", "--provider", provider], tmp_path, **variables)
    assert result.code == 2, result.stdout + result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    assert named in result.stderr and "abc" not in result.stderr
    assert not (tmp_path / ".autonomous").exists()


COMMANDS = ["run", "validate", "plan", "demo", "status", "logs", "context", "verify", "summarize", "doctor",
            "export", "combine", "report"]


@pytest.mark.parametrize("command", [[], *([name] for name in COMMANDS)], ids=lambda c: " ".join(c) or "orchestrate")
def test_dash_h_is_help_everywhere(command: list[str], tmp_path: Path) -> None:
    result = run_cli([*command, "-h"], tmp_path)
    assert result.code == 0, result.stderr
    assert result.stdout.startswith(f"Usage: orchestrate {' '.join(command)}".rstrip()), result.stdout
    assert result.stdout == run_cli([*command, "--help"], tmp_path).stdout


def test_the_top_level_help_shows_each_commands_summary_whole(tmp_path: Path) -> None:
    from typer.main import get_command

    from orchestrator.cli import commands, project_commands  # noqa: F401 (they register the commands)
    from orchestrator.cli.app import app

    group = get_command(app)
    shown = " ".join(run_cli(["--help"], tmp_path, COLUMNS="100").stdout.split("Commands:")[1].split())
    assert "..." not in shown
    for name in COMMANDS:
        command = group.commands[name]  # type: ignore[attr-defined]
        summary = " ".join((command.help or "").split("\n\n")[0].split())
        assert f"{name} {summary}" in shown, name


@pytest.mark.parametrize("command", ["verify", "validate", "combine", "plan"])
def test_sandbox_help_of_commands_without_an_agent_speaks_of_checks(command: str, tmp_path: Path) -> None:
    shown = " ".join(run_cli([command, "--help"], tmp_path).stdout.split())
    sandbox = shown[shown.index("--sandbox"):][:160]
    assert "checks" in sandbox and "agent" not in sandbox, sandbox


QUICKSTART_LIST = ('[{"category": "functional", "description": "User can log in", "steps": ["open"], "passes": false},'
                   ' {"category": "functional", "description": "User can log out", "steps": ["x"], "passes": false}]')


def test_validate_of_a_quickstart_list_leads_to_plan_from(tmp_path: Path) -> None:
    (tmp_path / "feature_list.json").write_text(QUICKSTART_LIST)

    result = run_cli(["validate", "feature_list.json"], tmp_path)

    assert result.code == 0, result.stderr
    assert "2 feature(s), 0 with a check" in result.stdout
    assert "next: orchestrate plan --from feature_list.json" in result.stdout
    assert "`orchestrate plan --from feature_list.json` keeps these features" in result.stderr


def test_plan_without_a_test_runner_says_no_checks_were_written_why_and_how_to_get_them(
    fake_api: Any, tmp_path: Path,
) -> None:
    from fake_messages_api.scripted_agent.forced_tools import ScriptedToolAnswers

    planned = {"project": "calc", "description": "A calculator.", "features": [
        {"id": "calc-add", "name": "Addition", "category": "core", "description": "add(a, b) in calc.py.",
         "acceptance": ["add(2, 3) == 5"], "depends_on": [], "verify": "pytest -q tests/test_add.py"}]}
    fake_api.tool_answers = ScriptedToolAnswers({"submit_spec": [planned]})
    (tmp_path / "idea.md").write_text("# Calc\n\nA calculator module with add(a, b).\n")
    project = tmp_path / "app"

    result = run_cli(["plan", str(tmp_path / "idea.md"), "--project-dir", str(project)], tmp_path, fake_api)

    assert result.code == 0, result.stderr
    out = " ".join(result.stdout.split())
    assert "checks: none written, because no test runner was found in the project" in out
    assert "feature check verify command" in out  # the table's columns are named
    assert "calc-add - pytest -q tests/test_add.py" in out
    assert "plan again with --write-checks --force" in out and "and the checks, then" not in out


@pytest.mark.slow
def test_a_second_demo_on_a_running_one_says_only_that_it_is_running(tmp_path: Path) -> None:
    import signal
    import subprocess

    from tests.cli_helpers import cli_env, orchestrate_command

    directory = tmp_path / "my-demo"
    first = subprocess.Popen(orchestrate_command("demo", "--dir", str(directory)), cwd=tmp_path, text=True,
                             env=cli_env(key=None), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             stdin=subprocess.DEVNULL)
    try:
        assert first.stdout is not None
        for line in first.stdout:  # under way, its lock held
            if line.startswith("[2/8] slugify"):
                break
        second = run_cli(["demo", "--dir", str(directory)], tmp_path, key=None, timeout=120)
    finally:
        first.send_signal(signal.SIGINT)
        first.communicate(timeout=120)

    assert second.code == 2, second.stdout + second.stderr
    assert "resuming" not in second.stdout, second.stdout
    assert "another run" in second.stderr or "running" in second.stderr, second.stderr
