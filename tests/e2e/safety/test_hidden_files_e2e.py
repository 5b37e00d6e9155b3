"""A checkpoint holds the files its check verified: an agent that hides its own module from git
with a `.gitignore` rule does not pass (issue 28, break 10)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fake_messages_api.scripted_agent.plans import bash, edit_create, report, text
from tests.cli_helpers import first_prompt, read_json, run_cli
from tests.git_helpers import git, init_repo

CHECK = 'python3 -c "import mod; assert mod.ANSWER == 42"'


def _spec(tmp_path: Path, check: str = CHECK) -> Path:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"project": "p", "features": [
        {"id": "feat-01", "name": "one", "category": "core", "description": "d", "verify": check, "max_attempts": 2},
        {"id": "feat-02", "name": "two", "category": "core", "description": "d", "verify": "true"},
    ]}))
    return spec


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_module_hidden_by_a_new_gitignore_rule_fails_the_attempt_until_the_rule_goes(
    fake_api: Any, tmp_path: Path, jobs: str
) -> None:
    project = init_repo(tmp_path / "project", {".gitignore": "*.tmp\n"})

    def plan(turn: Any) -> list[Any]:
        if turn.is_retry:  # told: the rule goes
            steps = [[bash("sed -i '/^mod.py$/d' .gitignore")], [report("done")], [text("ok")]]
        else:
            steps = [[edit_create("mod.py", "ANSWER = 42\n"), bash("echo mod.py >> .gitignore")], [report("done")],
                     [text("ok")]]
        return steps[min(turn.step, 2)]

    fake_api.plans["feat-01"] = plan

    result = run_cli(["run", str(_spec(tmp_path)), "--jobs", jobs, "--json"], project, fake_api)

    assert result.code == 0, result.stderr
    retry = first_prompt(fake_api, "feat-01", 1)
    assert "ignore rules this work added hide files from git: mod.py (`mod.py` in .gitignore)" in retry
    assert "python3 -c" not in retry.split("## Last Verification Result", 1)[1].split("```json", 1)[0]
    assert git(project, "show", "HEAD:mod.py") == "ANSWER = 42"
    state = read_json(project / ".autonomous/state/execution-state.json")["features"]
    assert state["feat-01"]["status"] == "passed" and state["feat-01"]["attempts"] == 2


def test_ignoring_caches_build_output_the_checks_output_and_files_ignored_already_is_fine(
    fake_api: Any, tmp_path: Path
) -> None:
    project = init_repo(tmp_path / "project", {".gitignore": "*.tmp\n"})
    fake_api.plans["feat-01"] = [
        [edit_create("mod.py", "ANSWER = 42\n"), edit_create("scratch.tmp", "x\n"), edit_create("build/out.txt", "x\n"),
         bash("printf '__pycache__/\\nbuild/\\n*.db\\n' >> .gitignore && python3 -c 'import mod'")],
        [report("done")],
    ]
    check = CHECK.replace('"import mod;', '"import mod; open(\'results.db\', \'w\').write(\'x\');')

    result = run_cli(["run", str(_spec(tmp_path, check)), "--json"], project, fake_api)

    assert result.code == 0, result.stderr
    state = read_json(project / ".autonomous/state/execution-state.json")["features"]
    assert state["feat-01"]["attempts"] == 1
    assert git(project, "show", "HEAD:mod.py") == "ANSWER = 42"
