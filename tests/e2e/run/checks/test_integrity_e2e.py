"""Issue 15 end to end through the CLI: exit 0 means every check passes on the tree the run leaves behind."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fake_messages_api.scripted_agent.plans import edit_create, report, text
from tests.cli_helpers import first_prompt, read_json, run_cli

CHECK_1 = "python3 -c 'import lib, sys; sys.exit(0 if lib.value() == 1 else 1)'"


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    _git(root, "init", "-q")
    _git(root, "config", "user.name", "t")
    _git(root, "config", "user.email", "t@example.com")
    (root / "README").write_text("project\n")
    (root / ".gitignore").write_text("ignored/\n__pycache__/\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "init")
    return root


def _spec(root: Path, features: list[dict[str, Any]]) -> Path:
    path = root.parent / "spec.json"
    full = [{"name": f["id"], "category": "core", "description": "d", "max_attempts": 2, **f} for f in features]
    path.write_text(json.dumps({"project": "p", "features": full}))
    return path


def _plan(*steps: list[Any]) -> Any:
    def plan(turn: Any) -> list[Any]:
        edits = steps[0](turn) if callable(steps[0]) else steps[0]
        return [edits, [report("done")], [text("ok")]][min(turn.step, 2)]
    return plan


def _state(root: Path) -> dict[str, Any]:
    return read_json(root / ".autonomous/state/execution-state.json")["features"]


def _check(root: Path, command: str) -> int:
    return subprocess.run(["bash", "-c", command], cwd=root, capture_output=True).returncode


def _breaking_feature_2(fake_api: Any) -> None:
    fake_api.plans["feat-01"] = _plan([edit_create("lib.py", "def value():\n    return 1\n")])

    def feature_2(turn: Any) -> list[Any]:
        fixed = turn.last_verification is not None and "broke feature feat-01" in (turn.last_verification["error"] or "")
        body = "def value():\n    return 1\n\ndef other():\n    return 2\n" if fixed else "def value():\n    return 2\n"
        return [edit_create("lib.py", body), edit_create("two.txt", "2\n")]

    fake_api.plans["feat-02"] = _plan(feature_2)


def _two_features(project: Path) -> Path:
    return _spec(project, [{"id": "feat-01", "verify": CHECK_1},
                           {"id": "feat-02", "verify": "test -f two.txt", "depends_on": ["feat-01"]}])


def test_a_break_of_feature_1_is_fed_back_and_fixed_and_the_final_tree_passes(fake_api, project):
    _breaking_feature_2(fake_api)
    spec = _two_features(project)

    result = run_cli(["run", str(spec), "--json"], project, fake_api)

    assert result.code == 0, result.stderr + result.stdout
    retry = first_prompt(fake_api, "feat-02", 1)
    fed = json.loads(retry.split("```json\n", 1)[1].split("\n```", 1)[0])
    assert fed["command"] == CHECK_1 and "your change broke feature feat-01" in fed["error"]
    # Said as it is (issue 42): its own check passed, which file broke whose check.
    assert "Attempt 1: Your feature's own check passed, but your change broke feature feat-01" in retry
    assert "you changed lib.py, which feature feat-01 uses" in retry and "FAILED with exit code" not in retry
    assert "Regression checks:" in first_prompt(fake_api, "feat-02", 0) and "feat-01" in first_prompt(fake_api, "feat-02", 0)
    events = result.events()
    checks = [e for e in events if e["type"] == "regression_check"]
    assert [(e["id"], e["checked"], e["success"]) for e in checks] == [("feat-02", "feat-01", False), ("feat-02", "feat-01", True)]
    assert [e["failed"] for e in events if e["type"] == "final_verification"] == [[]]
    log = read_json(project / ".autonomous/logs/feat-02.json")
    assert [a["regressionChecks"][0]["success"] for a in log["attemptHistory"]] == [False, True]
    assert "lib.py" in read_json(project / ".autonomous/logs/feat-01.json")["footprint"]["changed"]
    assert _state(project)["feat-01"]["footprint"]["changed"] == ["lib.py"]
    assert _check(project, CHECK_1) == 0 and _check(project, "test -f two.txt") == 0
    shown = run_cli(["logs", "feat-01"], project)
    assert "footprint: changed lib.py" in shown.stdout
    context = run_cli(["context", "feat-02", "--spec", str(spec)], project)
    assert "=== assessment: feature feat-02 ===" in context.stdout and "lib.py" in context.stdout


def test_without_the_guard_and_final_verification_the_old_behaviour_returns(fake_api, project):
    _breaking_feature_2(fake_api)
    spec = _two_features(project)

    result = run_cli(["run", str(spec), "--regression", "none", "--no-final-verify"], project, fake_api)

    assert result.code == 0, result.stderr
    assert len([r for r in fake_api.agent_requests("feat-02") if len(r.body["messages"]) == 1]) == 1
    assert _check(project, CHECK_1) == 1  # the break went unnoticed, as before


def _shared_file_break(fake_api: Any, project: Path, *, fix_on_retry: bool) -> Path:
    (project / "config.txt").write_text("mode=good\n")
    (project / "check1.sh").write_text("test -f one.txt && grep -q good config.txt\n")
    _git(project, "add", "-A")
    _git(project, "commit", "-qm", "config")
    fake_api.plans["feat-01"] = _plan([edit_create("one.txt", "1\n")])

    def feature_2(turn: Any) -> list[Any]:
        mode = "good" if fix_on_retry and turn.last_verification is not None else "bad"
        return [edit_create("config.txt", f"mode={mode}\n"), edit_create("two.txt", "2\n")]

    fake_api.plans["feat-02"] = _plan(feature_2)
    return _spec(project, [{"id": "feat-01", "verify": "sh check1.sh"}, {"id": "feat-02", "verify": "test -f two.txt"}])


def test_a_break_outside_every_footprint_is_caught_by_final_verification(fake_api, project):
    spec = _shared_file_break(fake_api, project, fix_on_retry=False)

    result = run_cli(["run", str(spec), "--junit", str(project.parent / "j.xml")], project, fake_api)

    assert result.code == 1, result.stderr
    assert "regressed" in result.stderr + result.stdout and "feat-01" in result.stderr
    state = _state(project)
    assert state["feat-01"]["status"] == "regressed" and state["feat-02"]["status"] == "passed"
    assert 'message="regressed' in (project.parent / "j.xml").read_text()
    # The next run rebuilds it with the failure fed back.
    fake_api.plans["feat-01"] = _plan([edit_create("config.txt", "mode=good\n")])
    again = run_cli(["run", str(spec)], project, fake_api)
    assert again.code == 0, again.stderr
    assert first_prompt(fake_api, "feat-01", 1).startswith("## Last Verification Result")


def test_regression_all_catches_the_shared_file_break_during_the_feature(fake_api, project):
    spec = _shared_file_break(fake_api, project, fix_on_retry=True)

    result = run_cli(["run", str(spec), "--regression", "all"], project, fake_api)

    assert result.code == 0, result.stderr
    assert "your change broke feature feat-01" in first_prompt(fake_api, "feat-02", 1)
    assert _check(project, "sh check1.sh") == 0


def _failing_middle(fake_api: Any, project: Path) -> Path:
    fake_api.plans["feat-01"] = _plan([edit_create("one.txt", "1\n")])
    fake_api.plans["feat-02"] = _plan([edit_create("broken.py", "half done\n"), edit_create("README", "changed\n"),
                                       edit_create("ignored/cache.txt", "agent\n")])
    fake_api.plans["feat-03"] = _plan([edit_create("three.txt", "3\n")])
    return _spec(project, [{"id": "feat-01", "verify": "test -f one.txt"},
                           {"id": "feat-02", "verify": "exit 1", "max_attempts": 1},
                           {"id": "feat-03", "verify": "test -f three.txt"}])


def test_a_failed_features_work_goes_to_its_branch_and_not_into_later_checkpoints(fake_api, project):
    (project / "ignored").mkdir()
    (project / "ignored/mine.txt").write_text("user's ignored file\n")
    spec = _failing_middle(fake_api, project)

    result = run_cli(["run", str(spec)], project, fake_api)

    assert result.code == 1
    assert "orchestrate/failed/feat-02" in result.stdout + result.stderr
    assert _state(project)["feat-02"]["failedBranch"] == "orchestrate/failed/feat-02"
    assert read_json(project / ".autonomous/logs/feat-02.json")["failedBranch"] == "orchestrate/failed/feat-02"
    kept = _git(project, "show", "orchestrate/failed/feat-02:broken.py")
    assert kept == "half done\n"
    assert "broken.py" not in _git(project, "ls-tree", "-r", "--name-only", "HEAD")
    assert (project / "README").read_text() == "project\n" and not (project / "broken.py").exists()
    assert (project / "ignored/mine.txt").read_text() == "user's ignored file\n"
    assert _git(project, "log", "-1", "--format=%s") == "orchestrate: feat-03: feat-03\n"
    assert _check(project, "test -f one.txt && test -f three.txt") == 0


def test_an_existing_branch_name_and_a_dirty_tree_lose_nothing(fake_api, project):
    _git(project, "branch", "orchestrate/failed/feat-02")
    (project / "README").write_text("the user's uncommitted edit\n")
    spec = _failing_middle(fake_api, project)
    spec_data = json.loads(spec.read_text())
    spec_data["features"] = spec_data["features"][1:2]  # only the failing one: the user's edit stays uncommitted
    spec.write_text(json.dumps(spec_data))

    result = run_cli(["run", str(spec)], project, fake_api)

    assert result.code == 1
    said = result.stdout + result.stderr
    assert "orchestrate/failed/feat-02-2" in said and "already exists" in said
    assert "not reset" in said and "README" in said
    assert _git(project, "rev-parse", "orchestrate/failed/feat-02") == _git(project, "rev-parse", "HEAD")
    assert _git(project, "show", "orchestrate/failed/feat-02-2:broken.py") == "half done\n"
    assert (project / "README").read_text() == "changed\n"  # not reset: it held the user's uncommitted work
    assert not (project / "broken.py").exists()


def test_verify_names_a_feature_an_external_edit_broke_survives_a_hanging_and_a_deleting_check(fake_api, project):
    fake_api.plans["feat-01"] = _plan([edit_create("lib.py", "def value():\n    return 1\n")])
    fake_api.plans["feat-02"] = _plan([edit_create("two.txt", "2\n")])
    hang_or_delete = "test -f two.txt && { test -f hang && sleep 60; test -f del && rm -f README; true; }"
    spec = _spec(project, [{"id": "feat-01", "verify": CHECK_1}, {"id": "feat-02", "verify": hang_or_delete}])
    assert run_cli(["run", str(spec)], project, fake_api).code == 0
    (project / "del").write_text("")
    _git(project, "add", "del")
    _git(project, "commit", "-qm", "del")
    deleting = run_cli(["verify"], project)
    assert deleting.code == 0, deleting.stderr
    assert "clean checkout of commit" in deleting.stdout
    assert (project / "README").read_text() == "project\n"  # the check deleted it in the checkout, not here
    assert not (project / ".autonomous/verify").exists()
    (project / "lib.py").write_text("def value():\n    return 3\n")  # an external edit breaks feat-01
    uncommitted = run_cli(["verify"], project)  # what you have, uncommitted edit included (issue 41)
    assert uncommitted.code == 1 and "feat-01" in uncommitted.stdout and "uncommitted changes" in uncommitted.stdout
    committed = run_cli(["verify", "--committed"], project)
    assert committed.code == 0 and "lib.py" in committed.stderr and "not committed" in committed.stderr
    (project / "hang").write_text("")
    _git(project, "add", "lib.py", "hang")
    _git(project, "commit", "-qm", "external edit")
    broken = run_cli(["verify", "--junit", str(project.parent / "v.xml")], project, ORCHESTRATE_CHECK_TIMEOUT="1")

    assert broken.code == 1
    assert "feat-01" in broken.stdout and "FAILED" in broken.stdout and "timed out after 1 s" in broken.stdout
    assert 'name="feat-01"' in (project.parent / "v.xml").read_text()
    only = run_cli(["verify", "--only", "feat-01", "--json", "--reopen"], project)
    assert only.code == 1 and json.loads(only.stdout)["failed"] == ["feat-01"]
    assert _state(project)["feat-01"]["status"] == "regressed"
    assert run_cli(["verify", "--only", "nope"], project).code == 2
