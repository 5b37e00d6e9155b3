"""`.autonomous/` is the program's own: a repository that ships one, or a link in it, stops a start.

A cloned repository can commit `.autonomous/worktrees -> ../../victim`: the run would then
create, reset and delete worktrees through the link, outside the project. Writes already refuse
a linked directory (`store.atomic`), and deletions remove a link as the link
(`remove_no_follow`); this refuses the whole thing at the start, with one line saying what to
do, before anything is read, written or deleted there (exit 2):

- anything under `.autonomous` that the repository tracks (the state never comes from git);
- `.autonomous` itself, or any directory of it, being a symbolic link (a link in place of a
  file is left to the writes, which replace it, and to the reads, which refuse it).
"""

from __future__ import annotations

import os
from pathlib import Path

from orchestrator.git.checkpoint import is_git_repo
from orchestrator.git.run_git import CheckpointError, run_git
from orchestrator.store.disk.atomic import refuse_links
from orchestrator.store.disk.paths import STATE_DIR_NAME
from orchestrator.user_errors import UsageError

# Never looked into: what is set aside there (links included) is never read or followed.
_NOT_WALKED = frozenset({"backups"})


def refuse_planted_state(root: Path) -> None:
    """Raise UsageError if the repository tracks anything under `.autonomous`, or LinkRefused
    (both exit 2) if `.autonomous` or a directory in it is a symbolic link."""
    tracked = _tracked(root)
    if tracked:
        more = f" and {len(tracked) - 1} more" if len(tracked) > 1 else ""
        raise UsageError(
            f"the repository commits {root / tracked[0]}{more}: {STATE_DIR_NAME}/ is orchestrate's own state and "
            f"never comes from a repository (a cloned one could lead it anywhere); remove it from git "
            f"(`git rm -r --cached {STATE_DIR_NAME}` and commit, then delete {root / STATE_DIR_NAME}) and run again"
        )
    link = _linked_directory(root / STATE_DIR_NAME)
    if link is not None:
        refuse_links(link)


def _tracked(root: Path) -> list[str]:
    if not is_git_repo(root):
        return []
    try:
        listed = run_git(root, "ls-files", "-z", "--", STATE_DIR_NAME)
    except CheckpointError:
        return []
    return [path for path in listed.stdout.split("\0") if path] if listed.returncode == 0 else []


def _linked_directory(top: Path) -> Path | None:
    """The first link at or below `top` that is not a link to a regular file; git worktrees
    (directories holding `.git`, the project's own files) are not looked into."""
    if top.is_symlink():
        return top
    if not top.is_dir():
        return None
    pending = [top]
    while pending:
        directory = pending.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            path = Path(entry.path)
            if entry.is_symlink():
                if not path.is_file():
                    return path
            elif entry.is_dir(follow_symlinks=False) and entry.name not in _NOT_WALKED \
                    and not os.path.lexists(path / ".git"):
                pending.append(path)
    return None
