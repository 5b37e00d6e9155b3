"""`orchestrate logs` (the list) takes its rows from the state, and prints what reading every
log gave before (issue 18: the list at 10,000 features must stay under a second)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import orchestrator.commands.listing as listing
from orchestrator.commands.rendering.text_table import render_table
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.feature_log import UnusableLog, load_feature_log
from orchestrator.store.state_peek import peek_features
from tests.cli_helpers import run_cli, write_spec


def _listing_from_every_log(logs_dir: Path) -> str:
    """The list as `logs` drew it before issue 18, each log file read and checked, in the order
    of issue 27: the state's features in spec order, then the other files by name."""
    names = [n for n in os.listdir(logs_dir) if n.endswith(".json")]
    spec_order = [f"{fid}.json" for fid in peek_features(ProjectPaths.for_project(logs_dir.parent.parent)) or {}]
    first = [name for name in spec_order if name in names]
    rows = []
    for name in first + sorted(set(names) - set(first)):
        try:
            log = load_feature_log(logs_dir / name)
            row = [listing.shown(log.status), listing.shown(log.attempts), f"{log.tokens.total:,}", f"{log.cost_usd:.4f}"]
        except (OSError, UnusableLog) as err:
            row = [listing.shown(f"(unusable log: {err})"), "", "", ""]
        rows.append([listing.shown(Path(name).stem), *row])
    columns = ("feature", "status", "attempts", "tokens", "cost (USD)")
    return render_table(columns, rows, right=frozenset({"attempts", "tokens", "cost (USD)"}))


@pytest.fixture
def finished(fake_api, tmp_path: Path) -> Path:
    """A finished run: two features passed, one failed after two attempts, one blocked."""
    project = tmp_path / "project"
    project.mkdir()
    spec = write_spec(project, 4, extra={
        "feat-02": {"verify": "echo nope; exit 3", "max_attempts": 2}, "feat-04": {"depends_on": ["feat-02"]},
    })
    result = run_cli(["run", str(spec)], project, fake_api)
    assert result.code == 1, result.stderr
    return project


def test_the_list_is_the_same_as_reading_every_log_and_reads_none(finished: Path, monkeypatch, capsys) -> None:
    paths = ProjectPaths.for_project(finished)
    listed = run_cli(["logs"], finished)
    assert listed.code == 0, listed.stderr
    assert listed.stdout == _listing_from_every_log(paths.logs_dir)
    rows = {line.split("│")[1].strip(): line.split("│")[2].strip() for line in listed.stdout.splitlines()
            if line.count("│") > 2}
    assert rows == {"feat-01": "passed", "feat-02": "failed", "feat-03": "passed", "feat-04": "blocked"}

    def no_log(path: Path) -> None:
        raise AssertionError(f"the list read {path}")

    monkeypatch.setattr(listing, "load_feature_log", no_log)  # the state names every feature
    assert listing.print_logs(paths, None) == 0
    assert capsys.readouterr().out == listed.stdout


def test_a_log_the_state_does_not_name_or_that_is_no_plain_file_is_read_as_before(
    finished: Path, tmp_path: Path
) -> None:
    logs_dir = ProjectPaths.for_project(finished).logs_dir
    (logs_dir / "orphan.json").write_text(json.dumps({"id": "orphan", "status": "passed", "attempts": 7}))
    (logs_dir / "forged.json").write_text(json.dumps({"id": "feat-01"}))
    (logs_dir / "dir.json").mkdir()
    (tmp_path / "elsewhere.json").write_text("{}")
    (logs_dir / "feat-03.json").unlink()
    (logs_dir / "feat-03.json").symlink_to(tmp_path / "elsewhere.json")

    listed = run_cli(["logs"], finished)

    assert listed.code == 0, listed.stderr
    assert listed.stdout == _listing_from_every_log(logs_dir)
    assert "(unusable log: it is a symbolic link)" in listed.stdout
    assert "(unusable log: it is not a regular file)" in listed.stdout


def test_the_list_follows_the_spec_order_as_status_does(fake_api, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    spec = project / "spec.json"
    spec.write_text(json.dumps({"project": "p", "verify": "true", "features": [
        {"id": fid, "name": fid, "description": "d"} for fid in ("zeta", "alpha", "mid")]}))
    assert run_cli(["run", str(spec)], project, fake_api).code == 0

    listed, status = run_cli(["logs"], project), run_cli(["status"], project)

    def order(text: str) -> list[str]:
        return [line.split("│")[1].strip() for line in text.splitlines() if line.count("│") > 2]

    assert order(listed.stdout) == order(status.stdout) == ["zeta", "alpha", "mid"]
