"""`--jobs N` with the integrity work: a feature that breaks one merged while it was being built is
caught on the merged tree, fed back, fixed, and every check passes on the branch at the end."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fake_messages_api.scripted_agent.plans import edit_create, report, text
from tests.cli_helpers import first_prompt, read_json, run_cli
from tests.git_helpers import init_repo, subjects, wait_for_checkpoint

CHECK_1 = "test -f one.txt && grep -q good config.txt"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return init_repo(tmp_path / "project", {"config.txt": "mode=good\n"})


def test_a_feature_that_breaks_one_merged_meanwhile_is_caught_on_the_merged_tree(fake_api: Any, project: Path):
    spec = project.parent / "spec.json"
    spec.write_text(json.dumps({"project": "p", "features": [
        {"id": "feat-01", "name": "one", "category": "core", "description": "d", "verify": CHECK_1},
        {"id": "feat-02", "name": "two", "category": "core", "description": "d", "verify": "test -f two.txt",
         "max_attempts": 3},
    ]}))
    fake_api.plans["feat-01"] = lambda turn: [[edit_create("one.txt", "1\n")], [report("done")], [text("ok")]][
        min(turn.step, 2)]

    def feature_2(turn: Any) -> list[Any]:
        if turn.step == 0 and turn.last_verification is None:
            wait_for_checkpoint(project, "feat-01")
        told = turn.last_verification is not None and "broke feature feat-01" in (turn.last_verification["error"] or "")
        edits = [edit_create("config.txt", f"mode={'good' if told else 'bad'}\n"), edit_create("two.txt", "2\n")]
        return [edits, [report("done")], [text("ok")]][min(turn.step, 2)]

    fake_api.plans["feat-02"] = feature_2

    result = run_cli(["run", str(spec), "--jobs", "2", "--json"], project, fake_api)

    assert result.code == 0, result.stderr + result.stdout
    merges = [(e["id"], e["result"]) for e in result.events() if e["type"] == "merge"]
    assert ("feat-02", "recheck_failed") in merges and merges[-1] == ("feat-02", "merged")
    retry = first_prompt(fake_api, "feat-02", 1)
    assert "your change broke feature feat-01" in retry and CHECK_1 in retry
    # As in a one-at-a-time run (issue 42 item 8): which changed file the broken feature uses.
    assert "you changed config.txt, which feature feat-01 uses" in retry
    checks = [(e["id"], e["checked"], e["success"]) for e in result.events() if e["type"] == "regression_check"]
    # The fixed attempt leaves config.txt as the branch has it: nothing of feat-01's to re-check then.
    assert checks == [("feat-02", "feat-01", False)]
    assert [e["failed"] for e in result.events() if e["type"] == "final_verification"] == [[]]
    assert subprocess.run(["bash", "-c", CHECK_1], cwd=project).returncode == 0
    checkpoints = [s for s in subjects(project) if s.startswith("orchestrate:")]
    assert checkpoints == ["orchestrate: feat-01: one", "orchestrate: feat-02: two"]
    state = read_json(project / ".autonomous/state/execution-state.json")["features"]
    assert state["feat-01"]["status"] == state["feat-02"]["status"] == "passed"
