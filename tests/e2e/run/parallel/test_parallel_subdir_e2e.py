"""`--jobs N` (and `--branch`) in a project that is a directory of a bigger repository (a monorepo).

Each worker's worktree holds the whole repository; the feature works, is checked and re-checked
in the project's directory inside it, and only the project's files are its business: the rest of
the repository and the user's uncommitted work there are left as they were.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from fake_messages_api.scripted_agent.plans import bash, report
from tests.cli_helpers import run_cli, write_spec


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def _monorepo(tmp_path: Path) -> tuple[Path, Path]:
    top = tmp_path / "repo"
    project = top / "services" / "widget"
    project.mkdir(parents=True)
    (top / "README.md").write_text("the monorepo\n")
    (top / "other").mkdir()
    (top / "other" / "code.txt").write_text("another team's code\n")
    (project / "app.txt").write_text("the widget\n")
    _git(top, "init", "-q")
    _git(top, "add", "-A")
    _git(top, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "start")
    return top, project


def test_jobs_in_a_directory_of_a_bigger_repository(tmp_path: Path, fake_api: Any) -> None:
    top, project = _monorepo(tmp_path)
    (top / "other" / "code.txt").write_text("work in progress elsewhere\n")  # the user's, not committed
    # feat-02 and feat-04 both change the project's app.txt: one of them conflicts and is redone.
    for fid in ("feat-02", "feat-04"):
        fake_api.plans[fid] = [[bash(f"mkdir -p features && echo done > features/{fid}.txt && echo {fid} >> app.txt")],
                               [report(f"Implemented {fid}")]]
    spec = write_spec(tmp_path, 4, extra={"feat-03": {"depends_on": ["feat-01"]}})
    result = run_cli(["run", str(spec), "-j", "2", "--json"], cwd=project, fake=fake_api)
    assert result.code == 0, result.stderr[-3000:]

    for index in range(1, 5):
        assert (project / "features" / f"feat-{index:02d}.txt").read_text() == "done\n"
    assert not (top / "features").exists()  # the work is in the project's directory, not at the top
    assert sorted((project / "app.txt").read_text().splitlines()) == ["feat-02", "feat-04", "the widget"]
    assert (top / "other" / "code.txt").read_text() == "work in progress elsewhere\n"
    subjects = _git(top, "log", "--format=%s").splitlines()
    assert sorted(s.split(": ")[1] for s in subjects if s.startswith("orchestrate: ")) == [
        f"feat-{i:02d}" for i in range(1, 5)
    ]
    changed = _git(top, "diff", "--name-only", "HEAD~4", "HEAD").split()
    assert all(path.startswith("services/widget/") for path in changed), changed
    # The re-check ran in the project's directory of the merged tree: the merge events name the
    # files as the project sees them.
    conflicts = [e for e in result.events() if e["type"] == "merge" and e["result"] == "conflict"]
    for event in conflicts:
        assert event["files"] == ["app.txt"]
    worktrees = [line for line in _git(top, "worktree", "list", "--porcelain").splitlines() if line.startswith("worktree ")]
    assert worktrees == [f"worktree {top}"]
    assert _git(top, "status", "--porcelain", "--", "services").strip() == ""


def test_branch_in_a_directory_of_a_bigger_repository_works_in_that_directory(tmp_path: Path, fake_api: Any) -> None:
    top, project = _monorepo(tmp_path)
    spec = write_spec(tmp_path, 1)
    result = run_cli(["run", str(spec), "--branch", "widget-work", "--json"], cwd=project, fake=fake_api)
    assert result.code == 0, result.stderr[-3000:]
    listed = _git(top, "show", "--name-only", "--format=", "widget-work").split()
    assert listed == ["services/widget/features/feat-01.txt"]
