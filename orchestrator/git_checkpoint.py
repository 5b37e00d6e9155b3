"""A git commit after every passed feature, so each verified step can be returned to.

Checkpoints never touch the user's `.gitignore`, never commit `.autonomous/`, never push, and
never wait for a prompt. Any git failure becomes `CheckpointError`, which the run loop reports
as a warning: a checkpoint that cannot be made must not stop a run.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from orchestrator.secrets import scrubbed_environment

from .paths import STATE_DIR_NAME

# Long enough for `git add` in a big tree or a slow commit hook; short enough that a hook
# waiting on something that never comes cannot stall a run for good.
_GIT_TIMEOUT = 300.0
_FALLBACK_IDENTITY = {"user.name": "orchestrate", "user.email": "orchestrate@localhost"}
# Limits committing to the project directory, minus the state directory.
_PROJECT_PATHS = ["--", ".", f":(exclude){STATE_DIR_NAME}"]


class CheckpointError(Exception):
    """A checkpoint commit could not be made; the message carries git's own words."""


def is_git_repo(project_root: Path) -> bool:
    """Whether `project_root` lies inside a git work tree (False when git is not installed)."""
    try:
        result = _git(project_root, "rev-parse", "--is-inside-work-tree")
    except CheckpointError:
        return False
    return result.returncode == 0 and result.stdout.strip() == "true"


def commit_checkpoint(project_root: Path, message: str) -> str | None:
    """Commit every change in the project except `.autonomous/`; return the new commit's sha.

    Returns None when there is nothing to commit. Raises `CheckpointError` (with git's
    stderr) for every git failure, including git not being installed.
    """
    _exclude_state_dir(project_root)
    # No exclude pathspec here: `git add` fails when one names an ignored directory. The
    # state directory is ignored by now, and the pathspecs below keep it out of the commit
    # even if the user once committed it.
    _check(project_root, "add", "--all", "--", ".")
    staged = _git(project_root, "diff", "--cached", "--quiet", *_PROJECT_PATHS)
    if staged.returncode == 0:
        return None
    if staged.returncode != 1:
        raise _error("git diff --cached", staged)
    identity: list[str] = []
    for key, fallback in _FALLBACK_IDENTITY.items():
        if _git(project_root, "config", "--get", key).returncode != 0:
            identity += ["-c", f"{key}={fallback}"]
    # Committing only the project's paths leaves alone anything the user staged elsewhere.
    _check(project_root, *identity, "commit", "--quiet", "-m", message, *_PROJECT_PATHS)
    return _check(project_root, "rev-parse", "HEAD").stdout.strip()


def head_commit(project_root: Path) -> str | None:
    """The commit HEAD points at; None on a branch with no commit yet, or when git cannot say."""
    try:
        result = _git(project_root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
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
        result = _git(project_root, "log", "-z", "--no-color", "--format=%H%n%B", *revisions, "--")
    except CheckpointError:
        return None
    if result.returncode != 0:
        return None  # no commit yet, or `since` is gone from the history: not found
    for entry in result.stdout.split("\0"):
        sha, _, body = entry.strip("\n").partition("\n")
        if sha and body.strip() == message.strip():
            return sha
    return None


def _exclude_state_dir(project_root: Path) -> None:
    """Make git ignore `.autonomous/` through `.git/info/exclude`, unless it already does."""
    state_dir = f"{STATE_DIR_NAME}/"
    if _git(project_root, "check-ignore", "--quiet", state_dir).returncode == 0:
        return
    prefix = _check(project_root, "rev-parse", "--show-prefix").stdout.strip()
    # Relative to project_root unless absolute (worktrees, submodules): `/` handles both.
    git_path = _check(project_root, "rev-parse", "--git-path", "info/exclude").stdout.strip()
    exclude = project_root / git_path
    pattern = "/" + _escape_glob(prefix + state_dir)
    try:
        exclude.parent.mkdir(parents=True, exist_ok=True)
        existing = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
        separator = "" if not existing or existing.endswith("\n") else "\n"
        if exclude.is_symlink():  # never append to whatever a link points at
            raise OSError(f"it is a symbolic link (to {os.readlink(exclude)}), not followed")
        with open(exclude, "a", encoding="utf-8") as handle:
            handle.write(f"{separator}# orchestrate's run state\n{pattern}\n")
    except OSError as exc:
        raise CheckpointError(f"could not update {exclude}: {exc}") from exc


def _escape_glob(path: str) -> str:
    """Escape characters that gitignore patterns treat specially."""
    return "".join("\\" + char if char in "\\[]*?!#" else char for char in path)


def _git(project_root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run git in `project_root` without a terminal; raise CheckpointError if it cannot run."""
    # No secrets and no hooks: the agent can write .git/hooks by routes the shell policy
    # misses, and a hook run here would otherwise see the API key.
    env = dict(scrubbed_environment(), GIT_TERMINAL_PROMPT="0")
    try:
        return subprocess.run(
            ["git", "-c", "core.hooksPath=/dev/null", *args],
            cwd=project_root,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=_GIT_TIMEOUT,
        )
    except subprocess.TimeoutExpired as exc:
        raise CheckpointError(f"{_describe(args)} timed out after {_GIT_TIMEOUT:g} s") from exc
    except OSError as exc:
        if exc.filename == "git":
            raise CheckpointError("git is not installed or not on PATH") from exc
        reason = exc.strerror or str(exc)
        raise CheckpointError(f"could not run git in {project_root}: {reason}") from exc


def _check(project_root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run git and raise CheckpointError unless it succeeds."""
    result = _git(project_root, *args)
    if result.returncode != 0:
        raise _error(_describe(args), result)
    return result


def _describe(args: tuple[str, ...]) -> str:
    """`git <subcommand>` for messages, skipping `-c key=value` options."""
    words = [a for a in args if not a.startswith("-") and "=" not in a]
    return "git " + (words[0] if words else "")


def _error(what: str, result: subprocess.CompletedProcess[str]) -> CheckpointError:
    detail = (result.stderr or result.stdout).strip() or f"exit status {result.returncode}"
    return CheckpointError(f"{what} failed: {detail}")
