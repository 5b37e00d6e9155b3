"""Issue 29 through the CLI: a bounded regression guard still catches a break of an earlier
feature (by the guard within its budget, by final verification when it deferred the check),
and without checkpoints a feature's footprint is only its own work."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from fake_messages_api.scripted_agent.plans import edit_create, report, text
from tests.cli_helpers import first_prompt, read_json, run_cli, write_spec

CHECK_1 = "test -f one.txt && grep -q ok shared.txt"


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def _plan(edits: Any) -> Any:
    def plan(turn: Any) -> list[Any]:
        return [edits(turn) if callable(edits) else edits, [report("done")], [text("ok")]][min(turn.step, 2)]
    return plan


def _three_on_one_file(fake_api: Any, project: Path) -> Path:
    """feat-01 and feat-02 write shared.txt; feat-03 breaks feat-01's check there (fixed when told)."""
    fake_api.plans["feat-01"] = _plan([edit_create("one.txt", "1\n"), edit_create("shared.txt", "ok\n")])
    fake_api.plans["feat-02"] = _plan([edit_create("two.txt", "2\n"), edit_create("shared.txt", "ok\nok 2\n")])

    def feature_3(turn: Any) -> list[Any]:
        told = turn.last_verification is not None and "broke feature feat-01" in (turn.last_verification["error"] or "")
        return [edit_create("three.txt", "3\n"), edit_create("shared.txt", "ok\n" if told else "gone\n")]

    fake_api.plans["feat-03"] = _plan(feature_3)
    features = [
        {"id": "feat-01", "verify": CHECK_1}, {"id": "feat-02", "verify": "test -f two.txt"},
        {"id": "feat-03", "verify": "test -f three.txt"},
    ]
    path = project.parent / "spec.json"
    path.write_text(json.dumps({"project": "p", "features": [
        {"name": f["id"], "category": "core", "description": "d", "max_attempts": 2, **f} for f in features]}))
    return path


def _summaries(events: list[dict[str, Any]], feature_id: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == "regression_summary" and e["id"] == feature_id]


def test_a_break_within_the_budget_is_caught_by_the_guard(fake_api: Any, project: Path) -> None:
    spec = _three_on_one_file(fake_api, project)

    result = run_cli(["run", str(spec), "--json", "--no-commit", "--regression-budget", "60s"], project, fake_api)

    assert result.code == 0, result.stderr
    assert "your change broke feature feat-01" in first_prompt(fake_api, "feat-03", 1)
    first, second = _summaries(result.events(), "feat-03")
    assert (first["affected"], first["ran"], first["failed"], first["deferred"]) == (2, 2, ["feat-01"], 0)
    assert (second["ran"], second["failed"], second["deferred"]) == (2, [], 0)


def test_a_deferred_break_is_caught_by_final_verification_and_rebuilt_by_the_next_run(fake_api: Any, project: Path) -> None:
    spec = _three_on_one_file(fake_api, project)

    # A budget of no time runs only the likeliest check: feat-02's, never re-run yet; feat-01's waits.
    result = run_cli(["run", str(spec), "--json", "--no-commit", "--regression-budget", "0s"], project, fake_api)

    assert result.code == 1, result.stderr
    (summary,) = _summaries(result.events(), "feat-03")
    assert (summary["affected"], summary["ran"], summary["failed"], summary["deferred"]) == (2, 1, [], 1)
    checked = [e["checked"] for e in result.events() if e["type"] == "regression_check" and e["id"] == "feat-03"]
    assert checked == ["feat-02"]
    (final,) = [e for e in result.events() if e["type"] == "final_verification"]
    assert final["failed"] == ["feat-01"]
    state = read_json(project / ".autonomous/state/execution-state.json")["features"]
    assert state["feat-01"]["status"] == "regressed" and state["feat-03"]["status"] == "passed"

    again = run_cli(["run", str(spec), "--no-commit", "--regression-budget", "0s"], project, fake_api)

    assert again.code == 0, again.stderr + again.stdout
    assert first_prompt(fake_api, "feat-01", 1).startswith("## Last Verification Result")
    assert (project / "shared.txt").read_text() == "ok\n"


def test_under_no_commit_a_git_projects_footprints_hold_only_their_own_work(fake_api: Any, project: Path) -> None:
    """Nothing is committed, so the diff from HEAD grows with every feature: it is not what a feature changed."""
    _git(project, "init", "-q")
    _git(project, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "init")
    spec = write_spec(project.parent, 5)

    result = run_cli(["run", str(spec), "--json", "--no-commit"], project, fake_api)

    assert result.code == 0, result.stderr
    assert [e for e in result.events() if e["type"] == "regression_check"] == []
    state = read_json(project / ".autonomous/state/execution-state.json")["features"]
    assert state["feat-05"]["footprint"]["changed"] == ["features/feat-05.txt"]
    assert {e["affected"] for e in result.events() if e["type"] == "regression_summary"} == {0}
