"""A git commit after every passed feature, so each verified step can be returned to.

Checkpoints never touch the user's `.gitignore`, never commit `.autonomous/`, never push, and
never wait for a prompt. Any git failure becomes `CheckpointError`, which the run loop reports
as a warning: a checkpoint that cannot be made must not stop a run.

Git runs here outside the agent's reach, so nothing the agent could have configured may run
or change what is committed: no hooks, no fsmonitor, no pager or external diff, and no
setting from the repository's own config (`.git/config` and whatever it includes) that runs
a program or rewrites content (clean filters, textconv, gpg programs, autocrlf, ...); those
are overridden with `-c`, back to the value from the user's global or system config if there
is one (so a git-lfs set up there keeps working), else to a setting that does nothing.

Each git runs in a session of its own and is waited for even when the run is interrupted: a
kill of the run's process group or a Ctrl-C cannot tear a commit and leave `.git/index.lock`
behind. A lock left anyway (git itself killed with -9, a reboot) is removed at the start of
a run and before each checkpoint once no running process has it open, with a warning.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from orchestrator.safety.secrets import scrubbed_environment
from orchestrator.store.paths import FRESH_BACKUP_PREFIX, STATE_DIR_NAME

# Long enough for `git add` in a big tree; short enough that a git waiting on something that
# never comes cannot stall a run for good.
_GIT_TIMEOUT = 300.0
# How long a checkpoint waits for another git to let go of .git/index.lock, and how long a
# lock must go unopened to count as stale (git closes it a moment before renaming it).
_LOCK_WAIT = 30.0
_LOCK_QUIET = 0.3
_FALLBACK_IDENTITY = {"user.name": "orchestrate", "user.email": "orchestrate@localhost"}
# Limits committing to the project directory, minus the state directory.
_PROJECT_PATHS = ["--", ".", f":(exclude){STATE_DIR_NAME}"]

# Set on every checkpoint git, whatever any config says: nothing of these is wanted here.
_ALWAYS = {
    "core.hooksPath": "/dev/null",
    "core.fsmonitor": "false",
    "core.pager": "cat",
    "diff.external": "",
    # A checkpoint must be quick and leave nothing running: no gc or maintenance behind it.
    "gc.auto": "0",
    "maintenance.auto": "false",
}
# Keys (lower case, as `git config --list` prints them) that run a program or change what is
# committed, each with the value that turns it off.
_NEUTRAL: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.DOTALL), value)
    for pattern, value in (
        (r"filter\..+\.(clean|smudge|process)", ""),
        (r"filter\..+\.required", "false"),
        (r"diff\..+\.(command|textconv)", ""),
        (r"core\.(editor|askpass|sshcommand|gitproxy)", ""),
        (r"sequence\.editor", ""),
        (r"pager\..+", "false"),
        (r"core\.attributesfile", ""),
        (r"core\.(autocrlf|safecrlf)", "false"),
        (r"core\.eol", "native"),
        (r"commit\.gpgsign", "false"),
        (r"gpg\.program", "gpg"),
        (r"gpg\.format", "openpgp"),
        (r"gpg\.ssh\.program", "ssh-keygen"),
        (r"gpg\.x509\.program", "gpgsm"),
        (r"gpg\.ssh\.defaultkeycommand", ""),
    )
)
_TRUSTED_SCOPES = ("system", "global", "command")


class CheckpointError(Exception):
    """A checkpoint commit could not be made; the message carries git's own words."""


def is_git_repo(project_root: Path) -> bool:
    """Whether `project_root` lies inside a git work tree (False when git is not installed)."""
    try:
        result = _git(project_root, "rev-parse", "--is-inside-work-tree")
    except CheckpointError:
        return False
    return result.returncode == 0 and result.stdout.strip() == "true"


def commit_checkpoint(
    project_root: Path, message: str, *, on_warning: Callable[[str], None] | None = None
) -> str | None:
    """Commit every change in the project except `.autonomous/`; return the new commit's sha.

    Returns None when there is nothing to commit. Raises `CheckpointError` (with git's
    stderr) for every git failure, including git not being installed. `on_warning` hears
    about a stale `.git/index.lock` removed first (default: a line on stderr).
    """
    clear_stale_index_lock(project_root, on_warning)
    safe = _safe_config(project_root)
    _exclude_state_dir(project_root, safe)
    # No exclude pathspec here: `git add` fails when one names an ignored directory. The
    # state directory is ignored by now, and the pathspecs below keep it out of the commit
    # even if the user once committed it.
    _check(project_root, *safe, "add", "--all", "--", ".")
    staged = _git(project_root, *safe, "diff", "--cached", "--quiet", "--no-ext-diff", "--no-textconv", *_PROJECT_PATHS)
    if staged.returncode == 0:
        return None
    if staged.returncode != 1:
        raise _error("git diff --cached", staged)
    identity: list[str] = []
    for key, fallback in _FALLBACK_IDENTITY.items():
        if _git(project_root, *safe, "config", "--get", key).returncode != 0:
            identity += ["-c", f"{key}={fallback}"]
    # Committing only the project's paths leaves alone anything the user staged elsewhere.
    _check(project_root, *safe, *identity, "commit", "--quiet", "--no-verify", "-m", message, *_PROJECT_PATHS)
    return _check(project_root, *safe, "rev-parse", "HEAD").stdout.strip()


def clear_stale_index_lock(project_root: Path, on_warning: Callable[[str], None] | None = None) -> bool:
    """Remove the repository's `index.lock` if no running process holds it; True if removed.

    A git killed mid-commit (kill -9, a reboot) leaves the lock behind, and every later git
    command that writes the index fails on it. A lock that a process has open is waited for
    (up to `_LOCK_WAIT` seconds) and never removed; one that nobody has had open for
    `_LOCK_QUIET` seconds is stale. Where processes cannot be inspected (no /proc), nothing is
    removed. Never raises: git's own error says the rest.
    """
    try:
        found = _git(project_root, "rev-parse", "--git-path", "index.lock")
    except CheckpointError:
        return False
    if found.returncode != 0 or not found.stdout.strip():
        return False
    lock = project_root / found.stdout.strip()
    deadline = time.monotonic() + _LOCK_WAIT
    unused_since: float | None = None
    while True:
        try:
            seen = os.lstat(lock)
        except OSError:
            return False  # no lock (any more)
        held = _lock_in_use(lock)
        now = time.monotonic()
        if held is None or (held and now >= deadline):
            return False
        if held:
            unused_since = None
        elif unused_since is None:
            unused_since = now
        elif now - unused_since >= _LOCK_QUIET:
            break
        time.sleep(0.05)
    try:
        # The very lock we looked at, not a new one that a git took in the meantime.
        current = os.lstat(lock)
        if (current.st_ino, current.st_mtime_ns) != (seen.st_ino, seen.st_mtime_ns):
            return False
        lock.unlink()
    except OSError:
        return False
    (on_warning or _warn_on_stderr)(
        f"removed {lock}, left behind by a git command that was killed while it held it "
        "(no process has it open now)"
    )
    return True


def _lock_in_use(lock: Path) -> bool | None:
    """Whether a running process has `lock` open; None where processes cannot be inspected.

    A git whose open files we may not see (another user's) counts as holding it.
    """
    try:
        entries = os.listdir("/proc")
    except OSError:
        return None
    # As /proc shows an open file: the real directory, the name as it is.
    lock_path = os.path.join(os.path.realpath(lock.parent), lock.name)
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            fds = os.listdir(f"/proc/{entry}/fd")
        except PermissionError:
            if _command_name(entry).startswith("git"):
                return True
            continue
        except OSError:
            continue  # it exited while we looked
        if any(_readlink(f"/proc/{entry}/fd/{fd}") == lock_path for fd in fds):
            return True
    return False


def _command_name(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as handle:
            return handle.read().strip()
    except OSError:
        return ""


def _readlink(path: str) -> str | None:
    try:
        return os.readlink(path)
    except OSError:
        return None


def _safe_config(project_root: Path) -> list[str]:
    """`-c` options that undo what the repository's own config could make git run or rewrite."""
    listed = _git(project_root, "config", "--list", "--show-scope", "--includes", "-z")
    if listed.returncode == 0:
        entries = _parse_config_list(listed.stdout, with_scope=True)
    else:  # a git older than 2.26 has no --show-scope: read the repository's config alone
        local = _git(project_root, "config", "--local", "--list", "--includes", "-z")
        entries = _parse_config_list(local.stdout, with_scope=False) if local.returncode == 0 else []
    # A key given without "=" is a boolean true.
    trusted = {key: "true" if value is None else value for scope, key, value in entries if scope in _TRUSTED_SCOPES}
    always = {key.lower() for key in _ALWAYS}
    overrides: dict[str, str] = {}
    for scope, key, _value in entries:
        if scope in _TRUSTED_SCOPES or key in always:
            continue
        neutral = next((value for pattern, value in _NEUTRAL if pattern.fullmatch(key)), None)
        if neutral is None:
            continue
        if "=" in key:  # `-c` splits at the first "=": such a key cannot be overridden
            raise CheckpointError(
                f"the repository's git config sets {key!r}, which checkpoints cannot switch off; "
                "remove it with `git config --unset` and run again"
            )
        overrides[key] = trusted.get(key, neutral)
    return [option for key, value in overrides.items() for option in ("-c", f"{key}={value}")]


def _parse_config_list(text: str, *, with_scope: bool) -> list[tuple[str, str, str | None]]:
    """(scope, key, value) from `git config --list -z`; a key without "=" has the value None."""
    fields = text.split("\0")
    entries: list[tuple[str, str, str | None]] = []
    index = 0
    while index < len(fields):
        scope = "local"
        if with_scope:
            scope, index = fields[index], index + 1
            if index >= len(fields):
                break
        key, newline, value = fields[index].partition("\n")
        index += 1
        if key:
            entries.append((scope, key, value if newline else None))
    return entries


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


def _exclude_state_dir(project_root: Path, safe: Sequence[str]) -> None:
    """Make git ignore `.autonomous/` through `.git/info/exclude`, unless it already does."""
    _exclude(project_root, safe, f"{STATE_DIR_NAME}/", f"{STATE_DIR_NAME}/", "orchestrate's run state")


def _exclude(project_root: Path, safe: Sequence[str], probe: str, pattern: str, comment: str) -> None:
    """Append `pattern` (relative to the project) to `.git/info/exclude` unless git already ignores `probe`."""
    if _git(project_root, *safe, "check-ignore", "--quiet", probe).returncode == 0:
        return
    prefix = _check(project_root, *safe, "rev-parse", "--show-prefix").stdout.strip()
    # Relative to project_root unless absolute (worktrees, submodules): `/` handles both.
    git_path = _check(project_root, *safe, "rev-parse", "--git-path", "info/exclude").stdout.strip()
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


def _git(project_root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run git in `project_root`, without a terminal, to the end; raise CheckpointError if it cannot run.

    Git gets a session of its own, so a signal to the run's process group does not reach it,
    and an interrupt (Ctrl-C, SIGTERM) raised here waits for git to finish before it goes on:
    a commit is never torn halfway. A second interrupt leaves git to finish on its own.
    """
    # No secrets, no hooks, no prompts: the agent can write .git/hooks by routes the shell
    # policy misses, and a hook run here would otherwise see the API key.
    env = dict(scrubbed_environment(), GIT_TERMINAL_PROMPT="0", GIT_PAGER="cat", GIT_EDITOR=":")
    argv = ["git", *_always_options(), *args]
    try:
        proc = subprocess.Popen(
            argv,
            cwd=project_root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            start_new_session=True,
        )
    except OSError as exc:
        if exc.filename == "git":
            raise CheckpointError("git is not installed or not on PATH") from exc
        reason = exc.strerror or str(exc)
        raise CheckpointError(f"could not run git in {project_root}: {reason}") from exc
    deadline = time.monotonic() + _GIT_TIMEOUT
    try:
        stdout, stderr = proc.communicate(timeout=_GIT_TIMEOUT)
    except subprocess.TimeoutExpired as exc:
        _kill(proc)
        raise CheckpointError(f"{_describe(args)} timed out after {_GIT_TIMEOUT:g} s") from exc
    except BaseException:
        try:
            proc.communicate(timeout=max(deadline - time.monotonic(), 0.0))
        except subprocess.TimeoutExpired:
            _kill(proc)
        raise
    return subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr)


def _always_options() -> list[str]:
    return [option for key, value in _ALWAYS.items() for option in ("-c", f"{key}={value}")]


def _kill(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    proc.communicate()


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


def _warn_on_stderr(message: str) -> None:
    print(f"orchestrate: warning: {message}", file=sys.stderr)


def exclude_run_state(project_root: Path) -> None:
    """Make git ignore `.autonomous/` and the `--fresh` backups `.autonomous.bak-*/`.

    Through `.git/info/exclude`, as for the state directory, so neither a checkpoint nor the
    user's own `git add -A` commits old events, logs and working memory. Raises CheckpointError.
    """
    safe = _safe_config(project_root)
    _exclude_state_dir(project_root, safe)
    backups = _escape_glob(FRESH_BACKUP_PREFIX) + "*/"
    _exclude(project_root, safe, f"{FRESH_BACKUP_PREFIX}0/", backups, "orchestrate's --fresh backups")
