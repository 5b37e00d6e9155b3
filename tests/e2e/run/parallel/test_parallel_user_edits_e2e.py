"""A user who edits a file in their checkout during a `--jobs` run keeps the edit, hears about
it, and the run goes on: the merge lands on the branch (issue 28, the minor break)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from fake_messages_api.scripted_agent.plans import edit_create, report, text
from tests.cli_helpers import read_json, run_cli, write_spec
from tests.git_helpers import git, init_repo


def test_a_file_the_user_edits_during_a_parallel_run_keeps_their_edit_and_the_branch_gets_the_merge(
    fake_api: Any, tmp_path: Path
) -> None:
    project = init_repo(tmp_path / "project", {"README.md": "widget\n", "notes.txt": "mine\n"})
    spec = write_spec(tmp_path, 2)

    def feature_1(turn: Any) -> list[Any]:
        if turn.step == 0:
            # The user, meanwhile, in their own checkout: an edit of a file the feature changes too,
            # a new file the feature adds too, and an edit of a file the feature leaves alone.
            (project / "README.md").write_text("widget, as the user wrote it\n")
            (project / "features").mkdir(exist_ok=True)
            (project / "features/feat-01.txt").write_text("the user's draft\n")
            (project / "notes.txt").write_text("mine, edited\n")
            return [edit_create("README.md", "widget, as the feature wrote it\n"),
                    edit_create("features/feat-01.txt", "done\n")]
        return [[report("done")], [text("ok")]][min(turn.step - 1, 1)]

    fake_api.plans["feat-01"] = feature_1

    result = run_cli(["run", str(spec), "--jobs", "2", "--json"], project, fake_api)

    assert result.code == 0, result.stderr
    state = read_json(project / ".autonomous/state/execution-state.json")["features"]
    assert state["feat-01"]["status"] == state["feat-02"]["status"] == "passed"
    # The branch has the feature's work; the working tree keeps every edit of the user's.
    assert git(project, "show", "HEAD:README.md") == "widget, as the feature wrote it"
    assert git(project, "show", "HEAD:features/feat-01.txt") == "done"
    assert (project / "README.md").read_text() == "widget, as the user wrote it\n"
    assert (project / "features/feat-01.txt").read_text() == "the user's draft\n"
    assert (project / "notes.txt").read_text() == "mine, edited\n"
    warnings = [e["message"] for e in result.events() if e["type"] == "warning"]
    kept = [m for m in warnings if m.startswith("you changed README.md, features/feat-01.txt while the run merged")]
    assert kept and "your version is kept in the working tree" in kept[0]
    status = subprocess.run(["git", "status", "--porcelain"], cwd=project, capture_output=True, text=True,
                            check=True).stdout.splitlines()
    assert sorted(status) == [" M README.md", " M features/feat-01.txt", " M notes.txt"]
