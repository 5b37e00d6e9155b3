"""`orchestrate run` at its edges: --fresh in a git project, --dry-run of a project not yet
made, a shard with nothing in it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.cli_helpers import file_tree, read_json, run_cli, write_spec


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


# --- --fresh keeps its backups out of git -------------------------------------------------


def committed_paths(repo: Path) -> set[str]:
    """Every path any commit of any branch has touched."""
    return {line for line in git(repo, "log", "--all", "--format=", "--name-only").splitlines() if line}


def test_fresh_backups_never_reach_a_checkpoint(fake_api, project):
    git(project, "init", "-q")
    spec = write_spec(project, 1)
    assert run_cli(["run", str(spec)], project, fake_api).code == 0

    spec = write_spec(project, 2)  # feat-02 is new, so the run after --fresh makes a checkpoint
    result = run_cli(["run", str(spec), "--fresh"], project, fake_api)

    assert result.code == 0, result.stderr
    (backup,) = project.glob(".autonomous.bak-*")
    assert (backup / "events.jsonl").exists() and (backup / "logs/feat-01.json").exists()
    assert "orchestrate: feat-02: Feature 2" in git(project, "log", "--format=%s")
    leaked = sorted(p for p in committed_paths(project) if p.startswith(".autonomous"))
    assert leaked == [], f"run state committed: {leaked[:5]}"
    # Nor would the user's own `git add -A` pick it up.
    assert ".autonomous" not in git(project, "status", "--porcelain", "--untracked-files=all")


def test_backups_made_before_the_project_became_a_repository_stay_out_of_it(fake_api, project):
    # As an earlier `--fresh` left it, before `git init`.
    backup = project / ".autonomous.bak-20250101-120000"
    (backup / "memory").mkdir(parents=True)
    (backup / "memory/working-memory.jsonl").write_text('{"note": "old"}\n')
    git(project, "init", "-q")
    spec = write_spec(project, 1)

    result = run_cli(["run", str(spec)], project, fake_api)

    assert result.code == 0, result.stderr
    assert "orchestrate: feat-01: Feature 1" in git(project, "log", "--format=%s")
    assert not [p for p in committed_paths(project) if p.startswith(".autonomous")]


# --- --dry-run of a project directory that does not exist yet ----------------------------


def test_dry_run_works_for_a_project_that_run_would_create_and_writes_nothing(tmp_path):
    spec = write_spec(tmp_path, 2)
    target = tmp_path / "new" / "project"
    before = file_tree(tmp_path)

    result = run_cli(["run", str(spec), "--dry-run", "--project-dir", str(target)], tmp_path, None, key=None)

    assert result.code == 0, result.stderr
    assert "===== feat-01 =====" in result.stdout and "===== feat-02 =====" in result.stdout
    assert not (tmp_path / "new").exists()
    assert file_tree(tmp_path) == before


def test_run_still_creates_a_missing_project_directory(fake_api, tmp_path):
    spec = write_spec(tmp_path, 1)
    target = tmp_path / "made" / "here"

    result = run_cli(["run", str(spec), "--project-dir", str(target)], tmp_path, fake_api)

    assert result.code == 0, result.stderr
    assert read_json(target / ".autonomous/state/execution-state.json")["features"]["feat-01"]["status"] == "passed"


# --- a shard with nothing in it ----------------------------------------------------------


def chain_spec(directory: Path) -> Path:
    """Two features in one dependency chain: a split into two shards leaves one empty."""
    return write_spec(directory, 2, extra={"feat-02": {"depends_on": ["feat-01"]}})


def test_an_empty_shard_says_so_and_runs_nothing(fake_api, project):
    spec = chain_spec(project)
    before = file_tree(project)

    result = run_cli(["run", str(spec), "--shard", "2/2"], project, fake_api)

    assert result.code == 0, result.stderr
    assert "shard 2/2 is empty" in result.stdout and "nothing to run" in result.stdout
    assert "passed" not in result.stdout
    assert not fake_api.requests
    assert file_tree(project) == before


def test_an_empty_shard_in_json_and_quiet_modes(fake_api, project):
    spec = chain_spec(project)

    as_json = run_cli(["run", str(spec), "--shard", "2/2", "--json"], project, fake_api)
    quiet = run_cli(["run", str(spec), "--shard", "2/2", "-q"], project, fake_api)

    assert as_json.code == 0 and quiet.code == 0
    (event,) = as_json.events()
    assert event["type"] == "nothing_selected" and event["shard"] == "2/2"
    assert "shard 2/2 is empty" in quiet.stdout


def test_an_empty_shard_still_writes_the_reports_ci_asked_for(fake_api, project, tmp_path):
    spec = chain_spec(project)
    report, junit = tmp_path / "report.json", tmp_path / "junit.xml"

    result = run_cli(["run", str(spec), "--shard", "2/2", "--report", str(report), "--junit", str(junit)],
                     project, fake_api)

    assert result.code == 0, result.stderr
    data = json.loads(report.read_text())
    assert data["outcome"] == "empty" and data["features"] == [] and "shard 2/2 is empty" in data["message"]
    assert 'tests="0"' in junit.read_text()


def test_only_outside_the_shard_names_where_the_features_are(fake_api, project):
    spec = write_spec(project, 2)  # two independent features: one per shard

    result = run_cli(["run", str(spec), "--shard", "2/2", "--only", "feat-01"], project, fake_api)

    assert result.code == 0, result.stderr
    assert "--only feat-01 selects no feature of shard 2/2 (they are in shard 1)" in result.stdout


def test_dry_run_of_an_empty_shard_says_so(project):
    spec = chain_spec(project)

    result = run_cli(["run", str(spec), "--shard", "2/2", "--dry-run"], project, None, key=None)

    assert result.code == 0, result.stderr
    assert "shard 2/2 is empty" in result.stdout and "=====" not in result.stdout
