"""A `.git` the agent made is never used: whether the project had one is recorded when the run starts.

The sandbox keeps the project's `.git` read-only, but only when there is one to protect. In a
project that was not a repository, an agent's `git init` (or a `.git` file naming a directory
of its choice) would give it a repository whose config, hooks and attributes are all its own,
and the program's next git there (a checkpoint, final verification, `orchestrate verify`)
would read them. So:

- `record_git_at_start` writes, once per run (a `--fresh` start records again), whether the
  project's `.git` existed: `.autonomous/state/git-at-start`;
- `run_git` refuses to run in a directory whose repository is such a `.git` appeared since
  (`refused_repository`): `is_git_repo` says no, and nothing reads it;
- after each attempt the job removes it (`remove_foreign_git`), saying so; one found when a run
  or `orchestrate verify` starts (a kill between the agent's command and that removal, or a
  `git init` of the user's since) stops it with exit 2 and what to do, deleting nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

from orchestrator.store.disk.atomic import remove_no_follow, write_text_atomic
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.user_errors import UsageError

_MARKER = "git-at-start"
_ABSENT = "absent"
_PRESENT = "present"


def _marker(root: Path) -> Path:
    return ProjectPaths.for_project(root).state_dir / _MARKER


def _recorded(root: Path) -> str | None:
    try:
        fd = os.open(_marker(root), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, encoding="utf-8", errors="replace") as handle:
        return handle.read(64).strip()


def record_git_at_start(root: Path) -> None:
    """Write whether `root/.git` exists, unless this run already recorded it; then refuse a `.git`
    that appeared since (exit 2): it may be an agent's, and nothing is deleted at a start."""
    if _recorded(root) is None:
        mark_repository(root, present=os.path.lexists(root / ".git"))
    refuse_foreign_git(root)


def refuse_foreign_git(root: Path) -> None:
    """Raise UsageError (exit 2) if `root/.git` appeared during a run that started without one."""
    foreign = foreign_git(root)
    if foreign is not None:
        raise UsageError(
            f"{foreign} was not there when this run started (an agent's command can make one), so orchestrate "
            f"runs no git on it: delete it (`rm -rf {foreign}`), or, if you made it, start afresh with "
            "`orchestrate run --fresh`"
        )


def mark_repository(root: Path, *, present: bool) -> None:
    """Record whether `root` has its own `.git` (the program's own `git init` records it present)."""
    paths = ProjectPaths.for_project(root)
    paths.state_dir.mkdir(parents=True, exist_ok=True)
    write_text_atomic(_marker(root), (_PRESENT if present else _ABSENT) + "\n")


def foreign_git(root: Path) -> Path | None:
    """`root/.git` when the run recorded that there was none at its start, else None."""
    git = root / ".git"
    if os.path.lexists(git) and _recorded(root) == _ABSENT:
        return git
    return None


def refused_repository(directory: Path) -> Path | None:
    """The `.git` git would use from `directory` if it is one that appeared during a run without one."""
    current = directory.absolute()
    for candidate in (current, *current.parents):
        if os.path.lexists(candidate / ".git"):
            return foreign_git(candidate)
    return None


def remove_foreign_git(root: Path) -> Path | None:
    """Delete `root/.git` if it appeared during a run that started without one; what was deleted.

    A link is removed as the link; a directory is removed without following any link inside it.
    """
    foreign = foreign_git(root)
    if foreign is None:
        return None
    remove_no_follow(foreign)
    return foreign
