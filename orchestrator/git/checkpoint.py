"""A git commit after every passed feature, so each verified step can be returned to.

Checkpoints never touch the user's `.gitignore`, never push, never wait for a prompt, and never
commit what `commit_filter` refuses (`.autonomous/`, `.autonomous.bak-*`, `orchestrate.toml`, a
new gitlink), whatever the ignore files say. Any git failure becomes `CheckpointError`, which the run loop reports
as a warning: a checkpoint that cannot be made must not stop a run.

Git runs here outside the agent's reach (`git_safety`: no hooks, no program or rewrite the
repository's own config could add, never torn by an interrupt), and a `.git/index.lock` that a
killed git left behind is removed first (`index_lock`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from orchestrator.git.commit_filter import REFUSED_PATHSPECS, drop_refused
from orchestrator.git.index_lock import clear_stale_index_lock
from orchestrator.git.run_git import CheckpointError, check_git, git_error, run_git, safe_config
from orchestrator.store.disk.paths import FRESH_BACKUP_PREFIX, STATE_DIR_NAME

_FALLBACK_IDENTITY = {"user.name": "orchestrate", "user.email": "orchestrate@localhost"}
# Limits committing to the project directory, minus what is never committed (`commit_filter`).
_PROJECT_PATHS = ["--", ".", *REFUSED_PATHSPECS]



def is_git_repo(project_root: Path) -> bool:
    """Whether `project_root` lies inside a git work tree (False when git is not installed)."""
    try:
        result = run_git(project_root, "rev-parse", "--is-inside-work-tree")
    except CheckpointError:
        return False
    return result.returncode == 0 and result.stdout.strip() == "true"


def commit_checkpoint(
    project_root: Path, message: str, *, on_warning: Callable[[str], None] | None = None
) -> str | None:
    """Commit every change in the project except what `commit_filter` refuses; return the new commit's sha.

    Returns None when there is nothing to commit. Raises `CheckpointError` (with git's
    stderr) for every git failure, including git not being installed. `on_warning` hears
    about a stale `.git/index.lock` removed first (default: a line on stderr).
    """
    clear_stale_index_lock(project_root, on_warning)
    safe = safe_config(project_root)
    _exclude_state_dir(project_root, safe)
    # No exclude pathspec here: `git add` fails when one names an ignored directory. What the
    # ignore files let through is taken out of the index again (a `.gitignore` negation outranks
    # the exclude above), and the pathspecs below keep the refused paths out of the commit even
    # where the user once committed them.
    check_git(project_root, *safe, "add", "--all", "--", ".")
    drop_refused(project_root, head_commit(project_root), safe)
    staged = run_git(project_root, *safe, "diff", "--cached", "--quiet", "--no-ext-diff", "--no-textconv", *_PROJECT_PATHS)
    if staged.returncode == 0:
        return None
    if staged.returncode != 1:
        raise git_error("git diff --cached", staged)
    identity: list[str] = []
    for key, fallback in _FALLBACK_IDENTITY.items():
        if run_git(project_root, *safe, "config", "--get", key).returncode != 0:
            identity += ["-c", f"{key}={fallback}"]
    # Committing only the project's paths leaves alone anything the user staged elsewhere.
    # The message through standard input: no length of it can overflow the argument list.
    check_git(project_root, *safe, *identity, "commit", "--quiet", "--no-verify", "-F", "-", *_PROJECT_PATHS,
              stdin=message)
    return check_git(project_root, *safe, "rev-parse", "HEAD").stdout.strip()


def head_commit(project_root: Path) -> str | None:
    """The commit HEAD points at; None on a branch with no commit yet, or when git cannot say."""
    try:
        result = run_git(project_root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    except CheckpointError:
        return None
    sha = result.stdout.strip()
    return sha if result.returncode == 0 and sha else None


def find_checkpoint(project_root: Path, message: str, since: str | None) -> str | None:
    """The newest commit on HEAD made after `since` whose message is `message`: a checkpoint a
    killed run made but did not get to record. None if there is none.

    `since` None means the branch had no commit yet: then only HEAD itself is looked at, so an
    older checkpoint of the same feature (before a --reset) is never taken for a new one.
    """
    revisions = [f"{since}..HEAD"] if since else ["--max-count=1", "HEAD"]
    try:
        result = run_git(project_root, "log", "-z", "--no-color", "--format=%H%n%B", *revisions, "--")
    except CheckpointError:
        return None
    if result.returncode != 0:
        return None  # no commit yet, or `since` is gone from the history: not found
    for entry in result.stdout.split("\0"):
        sha, _, body = entry.strip("\n").partition("\n")
        if sha and body.strip() == message.strip():
            return sha
    return None


def _exclude_state_dir(project_root: Path, safe: Sequence[str]) -> None:
    """Make git ignore `.autonomous/` through `.git/info/exclude`, unless it already does."""
    _exclude(project_root, safe, f"{STATE_DIR_NAME}/", f"{STATE_DIR_NAME}/", "orchestrate's run state")


def _exclude(project_root: Path, safe: Sequence[str], probe: str, pattern: str, comment: str) -> None:
    """Append `pattern` (relative to the project) to `.git/info/exclude` unless git already ignores `probe`."""
    if run_git(project_root, *safe, "check-ignore", "--quiet", probe).returncode == 0:
        return
    prefix = check_git(project_root, *safe, "rev-parse", "--show-prefix").stdout.strip()
    # Relative to project_root unless absolute (worktrees, submodules): `/` handles both.
    git_path = check_git(project_root, *safe, "rev-parse", "--git-path", "info/exclude").stdout.strip()
    exclude = project_root / git_path
    line = "/" + _escape_glob(prefix) + pattern
    try:
        exclude.parent.mkdir(parents=True, exist_ok=True)
        existing = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
        separator = "" if not existing or existing.endswith("\n") else "\n"
        if exclude.is_symlink():  # never append to whatever a link points at
            raise OSError(f"it is a symbolic link (to {os.readlink(exclude)}), not followed")
        with open(exclude, "a", encoding="utf-8") as handle:
            handle.write(f"{separator}# {comment}\n{line}\n")
    except OSError as exc:
        raise CheckpointError(f"could not update {exclude}: {exc}") from exc


def _escape_glob(path: str) -> str:
    """Escape characters that gitignore patterns treat specially."""
    return "".join("\\" + char if char in "\\[]*?!#" else char for char in path)


def exclude_run_state(project_root: Path) -> None:
    """Make git ignore `.autonomous/` and the `--fresh` backups `.autonomous.bak-*/`.

    Through `.git/info/exclude`, as for the state directory, so neither a checkpoint nor the
    user's own `git add -A` commits old events, logs and working memory. Raises CheckpointError.
    """
    safe = safe_config(project_root)
    _exclude_state_dir(project_root, safe)
    backups = _escape_glob(FRESH_BACKUP_PREFIX) + "*/"
    _exclude(project_root, safe, f"{FRESH_BACKUP_PREFIX}0/", backups, "orchestrate's --fresh backups")
