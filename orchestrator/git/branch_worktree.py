"""`orchestrate run --branch NAME`: checkpoints go to branch NAME, the user's checkout is left alone.

The run works in a git worktree of NAME at `.autonomous/worktrees/branch-<name>` (created from
the current HEAD when NAME does not exist yet, reused when it does), so neither the checked-out
branch nor the files in the user's working tree change. The run's records stay in the project's
own `.autonomous/`; nothing under it is ever committed. With `--shard I/N` and no branch given,
the branch is `orchestrate/shard-I-of-N`, so CI shards never write to the branch they build from.

The branch used is recorded in `.autonomous/state/branch.json`, where `orchestrate export`
finds it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from orchestrator.git.checkpoint import exclude_run_state, head_commit, is_git_repo
from orchestrator.git.run_git import CheckpointError, check_git, run_git, safe_config
from orchestrator.store.disk.atomic import write_text_atomic
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.user_errors import UsageError

WORKTREES_DIR = "worktrees"
BRANCH_RECORD = "branch.json"


def shard_branch(shard: str) -> str:
    """The default branch of `--shard I/N`: `orchestrate/shard-I-of-N`."""
    index, _, count = shard.strip().partition("/")
    return f"orchestrate/shard-{index.strip()}-of-{count.strip()}"


def wanted_branch(branch: str | None, shard: str | None, *, commit: bool, root: Path) -> str | None:
    """The branch checkpoints go to, or None for the checked-out one.

    A shard without `--branch` gets its own branch, but only where there is something to commit
    to (checkpoints on, a git repository with a commit): `--no-commit` shards stay as they were.
    """
    if branch:
        return branch.strip()
    if shard and commit and is_git_repo(root) and head_commit(root) is not None:
        return shard_branch(shard)
    return None


def worktree_path(paths: ProjectPaths, branch: str) -> Path:
    """Where the worktree of `branch` lives: `.autonomous/worktrees/branch-<name>`."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", branch).strip("-.") or "branch"
    return paths.autonomous / WORKTREES_DIR / f"branch-{slug}"


def current_branch(root: Path) -> str | None:
    """The branch checked out in `root`, None when HEAD is detached (or git cannot say)."""
    try:
        result = run_git(root, "symbolic-ref", "--quiet", "--short", "HEAD")
    except CheckpointError:
        return None
    return result.stdout.strip() or None if result.returncode == 0 else None


def open_branch_workspace(paths: ProjectPaths, branch: str, on_warning: Callable[[str], None]) -> Path:
    """The directory the run works in so that its checkpoints land on `branch`.

    The project itself when `branch` is checked out there; else the branch's worktree, made
    (and the branch created from HEAD) if missing. Raises `UsageError` saying what to do.
    """
    root = paths.root
    if not is_git_repo(root):
        raise UsageError(f"--branch {branch}: {root} is not a git repository (run `git init` and commit first)")
    if run_git(root, "check-ref-format", "--branch", branch).returncode != 0:
        raise UsageError(f"--branch {branch!r} is not a valid git branch name")
    if current_branch(root) == branch:
        record_branch(paths, branch, root)
        return root
    target = worktree_path(paths, branch)
    try:
        _ensure_worktree(root, branch, target, on_warning)
        exclude_run_state(root)  # the worktree lives under .autonomous/: never part of the user's tree
        # The worktree holds the whole repository; a project in a directory of it works there.
        workspace = target / check_git(root, "rev-parse", "--show-prefix").stdout.strip()
    except CheckpointError as err:
        raise UsageError(f"--branch {branch}: {err}") from err
    workspace.mkdir(parents=True, exist_ok=True)  # a project directory not committed yet
    record_branch(paths, branch, workspace)
    return workspace


def _ensure_worktree(root: Path, branch: str, target: Path, on_warning: Callable[[str], None]) -> None:
    safe = safe_config(root)
    check_git(root, *safe, "worktree", "prune")  # forget worktrees whose directory is gone
    if target.exists():
        here = run_git(target, "rev-parse", "--show-toplevel")
        if here.returncode == 0 and Path(here.stdout.strip()).resolve() == target.resolve():
            if current_branch(target) != branch:
                raise CheckpointError(f"{target} is a worktree of another branch; remove it with `git worktree remove`")
            return
        raise CheckpointError(f"{target} exists but is not a git worktree; move it away and run again")
    target.parent.mkdir(parents=True, exist_ok=True)
    exists = run_git(root, "show-ref", "--verify", "--quiet", f"refs/heads/{branch}").returncode == 0
    if exists:
        check_git(root, *safe, "worktree", "add", "--quiet", str(target), branch)
        on_warning(f"checkpoints go to branch {branch} (resumed), worked on in {target}")
        return
    if head_commit(root) is None:
        raise CheckpointError("the repository has no commit to start the branch from; commit once, then run again")
    check_git(root, *safe, "worktree", "add", "--quiet", "-b", branch, str(target), "HEAD")
    on_warning(f"checkpoints go to the new branch {branch}, worked on in {target}")


def record_branch(paths: ProjectPaths, branch: str, workspace: Path) -> None:
    """Remember which branch this project's run checkpoints to (read by `orchestrate export`)."""
    record = {"branch": branch, "workspace": str(workspace)}
    write_text_atomic(paths.state_dir / BRANCH_RECORD, json.dumps(record, indent=2) + "\n")


def recorded_branch(paths: ProjectPaths) -> str | None:
    """The branch the last `--branch` run used, if any."""
    try:
        data = json.loads((paths.state_dir / BRANCH_RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    branch = data.get("branch") if isinstance(data, dict) else None
    return branch if isinstance(branch, str) and branch else None
