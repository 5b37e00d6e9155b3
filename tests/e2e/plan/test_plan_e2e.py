"""`orchestrate plan` end to end, through the CLI, against the fake API's scripted planner."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fake_messages_api.scripted_agent.forced_tools import ScriptedToolAnswers, request_text
from fake_messages_api.scripted_agent.plans import bash, edit_create, report
from orchestrator.spec.load import load_spec
from tests.cli_helpers import read_json, run_cli

PY = sys.executable


def pytest_verify(feature_id: str) -> str:
    # Without the plugins installed here, pytest starts in a fraction of the time.
    return (f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {PY} -m pytest -q -p no:cacheprovider"
            f" tests/features/test_{feature_id.replace('-', '_')}.py")


def check_answer(feature_id: str, body: str) -> dict[str, Any]:
    path = f"tests/features/test_{feature_id.replace('-', '_')}.py"
    return {"files": [{"path": path, "content": body}], "verify": pytest_verify(feature_id)}


def feature(fid: str, name: str, depends_on: list[str], verify: str | None = None) -> dict[str, Any]:
    return {
        "id": fid, "name": name, "category": "core", "description": f"{name} in calc.py.",
        "acceptance": [f"{name} works"], "depends_on": depends_on, "verify": verify or pytest_verify(fid),
    }


INVALID_SPEC = {  # an unsafe id and a dependency on a feature nobody planned
    "project": "calc", "description": "A calculator module.",
    "features": [feature("Calc Add", "Addition", ["parser"]), feature("calc-sub", "Subtraction", ["calc-add"])],
}
VALID_SPEC = {
    "project": "calc", "description": "A calculator module.",
    "features": [feature("calc-add", "Addition", []), feature("calc-sub", "Subtraction", ["calc-add"])],
}
VACUOUS = "def test_add():\n    assert 1 + 1 == 2\n"
REAL_ADD = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
MISSING_HELPER = "from tests.feature_helpers import calculator\nfrom calc import sub\n\n\ndef test_sub():\n    assert sub(5, 3) == 2\n"
REAL_SUB = "from calc import sub\n\n\ndef test_sub():\n    assert sub(5, 3) == 2\n"


@pytest.fixture
def description(tmp_path: Path) -> Path:
    path = tmp_path / "DESCRIPTION.md"
    path.write_text("# Calc\n\nA Python module calc.py with add(a, b) and sub(a, b), tested with pytest.\n")
    return path


def test_plan_repairs_rewrites_and_every_check_is_red_then_run_builds_it(fake_api, project, description):
    script = ScriptedToolAnswers({
        "submit_spec": [INVALID_SPEC, VALID_SPEC],
        "submit_checks": [
            check_answer("calc-add", VACUOUS), check_answer("calc-add", REAL_ADD),
            check_answer("calc-sub", MISSING_HELPER), check_answer("calc-sub", REAL_SUB),
        ],
    })
    fake_api.tool_answers = script

    result = run_cli(["plan", str(description), "--json"], project, fake_api)

    assert result.code == 0, result.stderr
    spec_path = project / "spec.json"
    spec = load_spec(spec_path).spec  # the same validation as any spec
    assert spec.ids() == ["calc-add", "calc-sub"]
    # The invalid answer was sent back with its located problems, and repaired.
    repair = request_text(fake_api.forced_tool_calls[1].body)
    assert 'features[0].id: contains " "' in repair and "unknown id" in repair
    # The vacuous check was seen passing and rewritten; the broken one was fixed.
    rewrite = request_text(fake_api.forced_tool_calls[3].body)
    assert "PASSES on the current tree" in rewrite
    helper_fix = request_text(fake_api.forced_tool_calls[5].body)
    assert "wrong reason" in helper_fix and "test helper" in helper_fix
    assert script.asked == ["submit_spec"] * 2 + ["submit_checks"] * 4
    summary = json.loads(result.stdout)
    assert summary["repairs"] == 1 and summary["flagged"] == []
    assert [f["rewrites"] for f in summary["features"]] == [1, 1]
    for f in spec.features:
        check_file = f"tests/features/test_{f.id.replace('-', '_')}.py"
        assert f.red is True and f.protected == [check_file]
        assert (project / check_file).read_text() == (REAL_ADD if f.id == "calc-add" else REAL_SUB)
        # Every written check fails on the tree before its feature is built.
        assert subprocess.run(f.verify, shell=True, cwd=project, capture_output=True).returncode != 0

    fake_api.plans["calc-add"] = [[edit_create("calc.py", "def add(a, b):\n    return a + b\n")], [report("add")]]
    fake_api.plans["calc-sub"] = [
        [bash("printf 'def sub(a, b):\\n    return a - b\\n' >> calc.py")], [report("sub")],
    ]
    run = run_cli(["run", str(spec_path)], project, fake_api)

    assert run.code == 0, run.stderr
    state = read_json(project / ".autonomous/state/execution-state.json")
    assert {fid: entry["status"] for fid, entry in state["features"].items()} == {
        "calc-add": "passed", "calc-sub": "passed",
    }


def test_a_check_that_stays_vacuous_is_flagged_not_hidden(fake_api, project, description):
    always_passes = {"files": [{"path": "checks/ok.sh", "content": "exit 0\n"}], "verify": "sh checks/ok.sh"}
    fake_api.tool_answers = ScriptedToolAnswers({
        "submit_spec": [{"project": "calc", "description": "d", "features": [feature("calc-add", "Addition", [])]}],
        "submit_checks": [always_passes] * 3,
    })

    result = run_cli(["plan", str(description), "--write-checks"], project, fake_api)

    assert result.code == 1, result.stderr
    assert "calc-add: check flagged as vacuous" in result.stderr
    spec = load_spec(project / "spec.json").spec
    assert spec.features[0].red is False and spec.features[0].verify == "sh checks/ok.sh"
    assert len(fake_api.forced_tool_calls) == 4  # one plan, then the check and its two rewrites


def test_an_answer_that_stays_invalid_writes_nothing(fake_api, project, description):
    fake_api.tool_answers = ScriptedToolAnswers({"submit_spec": [INVALID_SPEC] * 3})

    result = run_cli(["plan", str(description)], project, fake_api)

    assert result.code == 1
    assert "still invalid after 2 repair(s)" in result.stderr
    assert list(project.iterdir()) == []


def test_plan_from_a_quickstart_list_keeps_its_features_and_adds_a_check_to_each(fake_api, project, tmp_path):
    listing = tmp_path / "feature_list.json"
    listing.write_text(json.dumps([
        {"category": "functional", "description": "add(a, b) returns the sum", "steps": ["add(2, 3) == 5"], "passes": False},
        {"category": "functional", "description": "sub(a, b) returns the difference", "steps": ["sub(5, 3) == 2"], "passes": False},
    ]))

    def check_for(request: dict[str, Any]) -> dict[str, Any]:
        fid = re.search(r"^ID: (\S+)$", request_text(request), re.MULTILINE).group(1)
        body = REAL_ADD if fid == "feature-001" else REAL_SUB
        return check_answer(fid, body)

    fake_api.tool_answers = ScriptedToolAnswers({"submit_checks": [check_for, check_for]})

    result = run_cli(["plan", "--from", str(listing), "-o", "spec.json"], project, fake_api)

    assert result.code == 0, result.stderr
    spec = load_spec(project / "spec.json").spec
    assert spec.ids() == ["feature-001", "feature-002"]
    assert [f.acceptance for f in spec.features] == [["add(2, 3) == 5"], ["sub(5, 3) == 2"]]
    assert [f.description for f in spec.features] == ["add(a, b) returns the sum", "sub(a, b) returns the difference"]
    for f in spec.features:
        assert f.red is True and f.verify == pytest_verify(f.id) and len(f.protected) == 1
    assert all(r.kind == "forced_tool" for r in fake_api.requests)  # no planning call: the features were kept


def test_plan_never_replaces_an_existing_spec_without_force(fake_api, project, description):
    existing = project / "spec.json"
    existing.write_text('{"features": []}')

    result = run_cli(["plan", str(description)], project, fake_api)

    assert result.code == 2 and "--force" in result.stderr
    assert existing.read_text() == '{"features": []}' and fake_api.calls == 0


def test_dry_run_prints_the_prompt_and_sends_nothing(fake_api, project, description):
    result = run_cli(["plan", str(description), "--dry-run"], project, fake_api, key=None)

    assert result.code == 0, result.stderr
    assert "## Product description" in result.stdout and "add(a, b) and sub(a, b)" in result.stdout
    assert fake_api.calls == 0 and list(project.iterdir()) == []


def test_max_cost_stops_before_the_cap_is_passed_and_writes_nothing(fake_api, project, description):
    result = run_cli(["plan", str(description), "--max-cost", "0.0001"], project, fake_api)

    assert result.code == 3
    assert "cost cap" in result.stderr and "no spec written" in result.stderr
    assert fake_api.calls == 0 and list(project.iterdir()) == []


def test_check_files_get_the_umask_mode_and_the_writer_is_asked_to_re_derive_values(fake_api, project, description):
    fake_api.tool_answers = ScriptedToolAnswers({
        "submit_spec": [{"project": "calc", "description": "d", "features": [feature("calc-add", "Addition", [])]}],
        "submit_checks": [check_answer("calc-add", REAL_ADD)],
    })

    result = run_cli(["plan", str(description), "--write-checks"], project, fake_api)

    assert result.code == 0, result.stderr
    check_file = project / "tests/features/test_calc_add.py"
    assert check_file.stat().st_mode & 0o777 == 0o644  # the tests' umask is 022, as a user's usually is
    check_system = json.dumps(fake_api.forced_tool_calls[1].body["system"])
    assert "re-derive every expected value" in check_system
