"""The path filter every commit of orchestrate goes through (`orchestrator.git.commit_filter`):
refused paths stay as the base has them, whatever the ignore files say."""

from __future__ import annotations

import subprocess
from pathlib import Path

from orchestrator.git.checkpoint import commit_checkpoint
from orchestrator.git.commit_filter import drop_refused
from orchestrator.git.run_git import safe_config
from tests.git_helpers import git, init_repo


def _committed(root: Path, rev: str = "HEAD") -> set[str]:
    return set(git(root, "ls-tree", "-r", "--name-only", rev).splitlines())


def test_a_checkpoint_leaves_out_the_config_change_and_a_nested_repository_and_keeps_the_rest(tmp_path: Path) -> None:
    root = init_repo(tmp_path / "p", {"orchestrate.toml": 'sandbox = "bwrap"\n', "a.txt": "a\n"})
    (root / "orchestrate.toml").write_text('sandbox = "none"\n')  # as an agent would
    (root / ".gitignore").write_text("!.autonomous/\n")
    (root / ".autonomous/state").mkdir(parents=True)
    (root / ".autonomous/state/run.lock").write_text("1\n")
    nested = init_repo(root / "vendor" / "lib")  # a nested repository: `git add` would make it a gitlink
    assert nested.exists()
    (root / "a.txt").write_text("b\n")

    sha = commit_checkpoint(root, "orchestrate: f: one")

    assert sha is not None
    assert _committed(root) == {"orchestrate.toml", "a.txt", ".gitignore"}
    assert git(root, "show", "HEAD:orchestrate.toml") == 'sandbox = "bwrap"'
    assert git(root, "show", "HEAD:a.txt") == "b"
    assert (root / "orchestrate.toml").read_text() == 'sandbox = "none"\n'  # the tree is not touched


def test_in_a_project_inside_a_bigger_repository_only_the_projects_refused_paths_are_dropped(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "mono", {"svc/app.py": "x = 1\n", "orchestrate.toml": "top = 1\n"})
    project = repo / "svc"
    (project / ".autonomous").mkdir()
    (project / ".autonomous/events.jsonl").write_text("{}\n")
    (project / "orchestrate.toml").write_text("mine = 1\n")
    (repo / "orchestrate.toml").write_text("top = 2\n")  # not the project's: no business of the filter
    (project / "app.py").write_text("x = 2\n")
    git(repo, "add", "--all", "--force")

    dropped = drop_refused(project, "HEAD", safe_config(project))

    assert dropped == [".autonomous/events.jsonl", "orchestrate.toml"]
    staged = set(git(repo, "diff", "--cached", "--name-only").splitlines())
    assert staged == {"svc/app.py", "orchestrate.toml"}


def test_on_a_branch_without_a_commit_refused_files_are_simply_left_out(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / "orchestrate.toml").write_text("a = 1\n")
    (root / ".autonomous.bak-1").mkdir()
    (root / ".autonomous.bak-1/state.json").write_text("{}\n")
    (root / "main.py").write_text("print(1)\n")
    git(root, "add", "--all", "--force")

    assert drop_refused(root, None, safe_config(root)) == [".autonomous.bak-1/state.json", "orchestrate.toml"]
    assert git(root, "ls-files") == "main.py"


def test_refused_files_the_user_once_committed_keep_their_committed_content(tmp_path: Path) -> None:
    root = init_repo(tmp_path / "p", {".autonomous.bak-1/state/x.json": "old\n", ".autonomous/logs/f.json": "old\n",
                                       "a.txt": "a\n"})
    (root / ".autonomous.bak-1/state/x.json").write_text("forged\n")
    (root / ".autonomous/logs/f.json").write_text("forged\n")
    (root / "a.txt").write_text("b\n")

    commit_checkpoint(root, "orchestrate: f: one")

    assert git(root, "show", "HEAD:.autonomous.bak-1/state/x.json") == "old"
    assert git(root, "show", "HEAD:.autonomous/logs/f.json") == "old"
    assert git(root, "show", "HEAD:a.txt") == "b"
