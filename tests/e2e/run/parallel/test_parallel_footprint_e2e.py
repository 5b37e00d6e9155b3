"""Footprints and the `affected` regression guard work the same with `--jobs N` as one at a time:
a feature that rewrites a file a passed feature changed is caught and fed back (issue 28, break 11)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fake_messages_api.scripted_agent.plans import bash, edit_str_replace, report, text
from tests.cli_helpers import first_prompt, read_json, run_cli
from tests.git_helpers import init_repo, wait_for_checkpoint

CORE = "def one():\n    return 0\n" + "\n# unrelated\n" * 8 + "\nVALUE = 1\n"
CHECK_1 = 'python3 -c "import core; assert core.one() == 1"'
CHECK_2 = 'python3 -c "import core; assert core.TWO == 2"'


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_feature_that_rewrites_a_passed_features_file_is_caught_in_every_mode(
    fake_api: Any, tmp_path: Path, jobs: str
) -> None:
    project = init_repo(tmp_path / "project", {"core.py": CORE})
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"project": "p", "features": [
        {"id": "feat-01", "name": "one", "category": "core", "description": "d", "verify": CHECK_1},
        {"id": "feat-02", "name": "two", "category": "core", "description": "d", "verify": CHECK_2,
         "max_attempts": 3},
    ]}))
    fake_api.plans["feat-01"] = lambda turn: [
        [edit_str_replace("core.py", "return 0", "return VALUE")], [report("done")], [text("ok")]
    ][min(turn.step, 2)]

    def feature_2(turn: Any) -> list[Any]:
        if turn.step == 0 and turn.last_verification is None:
            wait_for_checkpoint(project, "feat-01")
        told = turn.last_verification is not None and "broke feature feat-01" in (turn.last_verification["error"] or "")
        value = 1 if told else 5  # the first attempt breaks feat-01's one()
        edit = bash(f"sed -i 's/^VALUE = .*/VALUE = {value}/' core.py && (grep -q '^TWO' core.py || echo 'TWO = 2' >> core.py)")
        return [[edit], [report("done")], [text("ok")]][min(turn.step, 2)]

    fake_api.plans["feat-02"] = feature_2

    result = run_cli(["run", str(spec), "--jobs", jobs, "--json"], project, fake_api)

    assert result.code == 0, result.stderr
    retry = first_prompt(fake_api, "feat-02", 1)
    assert "your change broke feature feat-01" in retry and "core.one() == 1" in retry
    checks = [(e["id"], e["checked"], e["success"]) for e in result.events() if e["type"] == "regression_check"]
    assert ("feat-02", "feat-01", False) in checks
    state = read_json(project / ".autonomous/state/execution-state.json")["features"]
    assert state["feat-01"]["status"] == state["feat-02"]["status"] == "passed"
    assert state["feat-01"]["footprint"]["changed"] == ["core.py"]
    assert state["feat-02"]["footprint"]["changed"] == ["core.py"]
    assert [e["failed"] for e in result.events() if e["type"] == "final_verification"] == [[]]
