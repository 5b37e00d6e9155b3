"""Issue 27: a feature prints a fixed number of plain lines, in the order things happen, the same
in a serial run and with `--jobs`; the guard's details are under -v, in --json and in the log."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from fake_messages_api.scripted_agent.plans import edit_create, report, text
from tests.cli_helpers import read_json, run_cli
from tests.git_helpers import init_repo

CHECK_1 = "python3 -c 'import lib, sys; sys.exit(0 if lib.value() == 1 else 1)'"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return init_repo(tmp_path / "project", {"README": "project\n", ".gitignore": "__pycache__/\n"})


def _plan(edits: Any) -> Any:
    def plan(turn: Any) -> list[Any]:
        return [edits(turn) if callable(edits) else edits, [report("done")], [text("ok")]][min(turn.step, 2)]
    return plan


def _breaking_feature_2(fake_api: Any, project: Path) -> Path:
    """feat-02 breaks feat-01's check on its first attempt, and fixes it when told."""
    fake_api.plans["feat-01"] = _plan([edit_create("lib.py", "def value():\n    return 1\n")])

    def feature_2(turn: Any) -> list[Any]:
        told = turn.last_verification is not None and "broke feature feat-01" in (turn.last_verification["error"] or "")
        body = "def value():\n    return 1\n" if told else "def value():\n    return 2\n"
        return [edit_create("lib.py", body), edit_create("two.txt", "2\n")]

    fake_api.plans["feat-02"] = _plan(feature_2)
    spec = project.parent / "spec.json"
    spec.write_text(json.dumps({"project": "p", "features": [
        {"id": "feat-01", "name": "one", "category": "core", "description": "d", "verify": CHECK_1},
        {"id": "feat-02", "name": "two", "category": "core", "description": "d", "verify": "test -f two.txt",
         "depends_on": ["feat-01"], "max_attempts": 2},
    ]}))
    return spec


def _lines_of(stdout: str, feature_id: str) -> list[str]:
    """feat-02's lines, from its first `[i/n]` line to its FINISHED one (tags of --jobs dropped)."""
    lines = [re.sub(r"^\[[\w.-]+\] ", "", line).strip() for line in stdout.splitlines()]
    start = next(i for i, line in enumerate(lines) if line.startswith("[") and f"] {feature_id}:" in line)
    end = next(i for i, line in enumerate(lines) if line.startswith(f"{feature_id} PASSED"))
    return lines[start:end + 1]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_the_own_check_then_one_regression_line_in_both_modes(fake_api: Any, project: Path, jobs: str) -> None:
    spec = _breaking_feature_2(fake_api, project)

    result = run_cli(["run", str(spec), "--jobs", jobs], project, fake_api)

    assert result.code == 0, result.stderr + result.stdout
    lines = _lines_of(result.stdout, "feat-02")
    assert "regression check of" not in result.stdout and CHECK_1 not in result.stdout
    own = [i for i, line in enumerate(lines) if line == "check passed"]
    guard = [i for i, line in enumerate(lines) if line.startswith("regression:")]
    assert len(guard) == 2 and len(own) >= 2, lines
    assert own[0] < guard[0] and own[-1] < guard[-1], lines  # the own check first, each attempt
    assert re.fullmatch(r"regression: 1 of 1 check FAILED \(feat-01\) \(\d+\.\d s\)", lines[guard[0]])
    assert re.fullmatch(r"regression: 1 check of 1 affected feature passed \(\d+\.\d s\)", lines[guard[1]])


def test_the_guards_details_are_under_v_in_json_and_in_the_log(fake_api: Any, project: Path) -> None:
    spec = _breaking_feature_2(fake_api, project)

    verbose = run_cli(["run", str(spec), "-v"], project, fake_api)

    assert verbose.code == 0, verbose.stderr + verbose.stdout
    assert "regression check of feat-01: FAILED (exit 1)" in verbose.stdout
    assert f"check `{CHECK_1}` passed" in verbose.stdout
    events = [json.loads(line) for line in (project / ".autonomous/events.jsonl").read_text().splitlines()]
    summaries = [e for e in events if e["type"] == "regression_summary"]
    assert [(e["id"], e["affected"], e["ran"], e["failed"], e["deferred"]) for e in summaries] == [
        ("feat-01", 0, 0, [], 0), ("feat-02", 1, 1, ["feat-01"], 0), ("feat-02", 1, 1, [], 0)]
    assert all(isinstance(e["durationMs"], int) for e in summaries)
    log = read_json(project / ".autonomous/logs/feat-02.json")
    assert [a["regressionChecks"][0]["success"] for a in log["attemptHistory"]] == [False, True]


def test_lines_per_feature_do_not_grow_with_the_checks_the_guard_reruns(fake_api: Any, project: Path) -> None:
    """Each feature depends on every earlier one, so the guard re-runs them all: 1, 2, ... 7 checks."""
    features = [{"id": f"f{i}", "name": f"n{i}", "category": "c", "description": "d", "verify": f"test -f f{i}.txt",
                 "depends_on": [f"f{j}" for j in range(1, i)]} for i in range(1, 9)]
    for i in range(1, 9):
        fake_api.plans[f"f{i}"] = _plan([edit_create(f"f{i}.txt", "x\n")])
    spec = project.parent / "spec.json"
    spec.write_text(json.dumps({"project": "p", "features": features}))

    # A budget every check fits in (the default defers some of them: issue 29).
    result = run_cli(["run", str(spec), "--summarize-every", "100", "--regression-budget", "600s"], project, fake_api)

    assert result.code == 0, result.stderr + result.stdout
    counts = {fid: len(_lines_of(result.stdout, fid)) for fid in ("f2", "f8")}
    assert counts["f2"] == counts["f8"], result.stdout
    assert "regression: 7 checks of 7 affected features passed" in result.stdout
