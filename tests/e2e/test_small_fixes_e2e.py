"""Small things a user notices, each through the CLI: git or not, tiny caps, file modes,
a missing spec, `report` with no option, the project's name on reports."""

from __future__ import annotations

import os
import stat
import subprocess
import xml.etree.ElementTree as ET

from tests.cli_helpers import cli_env, orchestrate_command, read_json, run_cli, write_spec

NOT_GIT = "is not a git repository: no checkpoint commits"


def test_a_serial_run_outside_git_says_so_once_before_the_first_feature(fake_api, project):
    spec = write_spec(project, 2, extra={"feat-02": {"verify": "exit 1", "max_attempts": 1}})

    result = run_cli(["run", str(spec)], project, fake_api)

    assert result.code == 1
    assert result.stderr.count(NOT_GIT) == 1, result.stderr
    warning_at = result.stderr.index(NOT_GIT)
    assert "feat-02 failed" in result.stderr[warning_at:], "said before the first failure, not at it"
    assert not (project / ".git").exists()


def test_no_commit_outside_git_runs_without_a_repository_or_a_warning(fake_api, project):
    spec = write_spec(project, 1)

    result = run_cli(["run", str(spec), "--no-commit"], project, fake_api)

    assert result.code == 0, result.stderr
    assert NOT_GIT not in result.stderr
    assert not (project / ".git").exists()


def test_jobs_in_a_new_directory_says_it_made_it_a_repository(fake_api, tmp_path):
    spec = write_spec(tmp_path, 2)
    project = tmp_path / "new"

    result = run_cli(["run", str(spec), "--jobs", "2", "--project-dir", str(project)], tmp_path, fake_api)

    assert result.code == 0, result.stderr
    assert "`git init` made it one" in result.stderr
    assert (project / ".git").is_dir()


def test_a_tiny_cost_cap_is_shown_with_its_digits(fake_api, project):
    spec = write_spec(project, 1)

    result = run_cli(["run", str(spec), "--max-cost", "0.001"], project, fake_api)

    assert result.code == 3, result.stdout + result.stderr
    assert "cost cap $0.001 reached" in result.stdout + result.stderr
    assert "$0.00 reached" not in result.stdout + result.stderr


def test_reports_follow_the_umask_and_the_state_stays_private(fake_api, project, tmp_path):
    spec = write_spec(project, 1)
    out = tmp_path / "out"
    args = ["run", str(spec), "--report", str(out / "r.json"), "--junit", str(out / "j.xml"), "--html", str(out / "r.html")]

    done = subprocess.run(orchestrate_command(*args), cwd=project, env=cli_env(fake_api), capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL, umask=0o022)

    assert done.returncode == 0, done.stderr
    for name in ("r.json", "j.xml", "r.html"):
        assert stat.S_IMODE((out / name).stat().st_mode) == 0o644, name
    assert stat.S_IMODE((project / ".autonomous/state/execution-state.json").stat().st_mode) == 0o600


def test_the_project_name_titles_the_junit_suite_and_the_reports(fake_api, project, tmp_path):
    spec = write_spec(project, 1)  # "project": "widget"

    result = run_cli(["run", str(spec), "--junit", str(tmp_path / "j.xml"), "--html", str(tmp_path / "r.html"),
                      "--report", str(tmp_path / "r.json")], project, fake_api)

    assert result.code == 0, result.stderr
    suite = ET.parse(tmp_path / "j.xml").getroot().find("testsuite")
    assert suite is not None and suite.get("name") == "widget"
    assert "<title>widget: orchestrate run report" in (tmp_path / "r.html").read_text()
    assert read_json(tmp_path / "r.json")["project"] == "widget"
    again = run_cli(["report", "--html", str(tmp_path / "again.html")], project)
    assert again.code == 0 and "<h1>widget: orchestrate run report</h1>" in (tmp_path / "again.html").read_text()


def test_a_missing_spec_file_is_said_not_to_exist(project):
    result = run_cli(["run", "nope.json"], project)

    assert result.code == 2
    assert "nope.json: the spec file does not exist" in result.stderr
    assert "not a valid feature spec" not in result.stderr and "No such file or directory" not in result.stderr


def test_report_with_no_option_prints_the_last_runs_summary(fake_api, project):
    before = run_cli(["report"], project)
    assert before.code == 2 and "no run recorded" in before.stderr
    spec = write_spec(project, 2, extra={"feat-02": {"verify": "exit 1", "max_attempts": 1}})
    run = run_cli(["run", str(spec), "--no-commit"], project, fake_api)
    assert run.code == 1

    result = run_cli(["report"], project)

    assert result.code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("widget: run failed: 1 passed, 1 failed, 0 blocked, 0 pending"), result.stdout
    assert "failed: feat-02" in lines
    assert any(line.startswith("final verification: 1/1") for line in lines), result.stdout
    assert not any(path.suffix == ".html" for path in project.iterdir())
    assert os.path.basename(str(spec)) in result.stdout


def test_dollar_amounts_keep_the_digits_that_make_them_non_zero():
    from orchestrator.llm.costs.pricing import usd

    shown = {amount: usd(amount) for amount in (0.001, 0.0015, 0.000004, 0.5, 2.5, 10, 0)}
    assert shown == {0.001: "$0.001", 0.0015: "$0.0015", 0.000004: "$0.000004", 0.5: "$0.50", 2.5: "$2.50",
                     10: "$10.00", 0: "$0.00"}
