"""The one way the program runs git: outside the agent's reach, to the end, never half done.

Every git the program starts goes through `run_git` (a unit test fails if another module
starts one). Nothing the agent could have configured may run or change what is committed
(`hardening`): no submodule or nested repository is entered, no hook, fsmonitor, pager or
external diff runs, and every program-running setting of the repository's own config (`.git/config`
and whatever it includes: filters, textconv, merge drivers, credential helpers, ...) is overridden
with `-c`, back to the user's global or system value if there is one, else to a value that does
nothing. A `.git` that appeared during a run which started without one is refused
(`repository_guard`).

Each git runs in a session of its own and is waited for even when the run is interrupted: a
kill of the run's process group or a Ctrl-C cannot tear a commit and leave `.git/index.lock`
behind. Any failure to run git, or git failing, is a `CheckpointError` with git's own words.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from orchestrator.git import hardening
from orchestrator.git.repository_guard import refused_repository
from orchestrator.safety.credentials.secrets import scrubbed_environment
from orchestrator.user_errors import StopError

# Long enough for `git add` in a big tree; short enough that a git waiting on something that
# never comes cannot stall a run for good.
_GIT_TIMEOUT = 300.0


class CheckpointError(StopError):
    """A git command could not run or failed; the message carries git's own words."""


def safe_config(project_root: Path) -> list[str]:
    """`-c` options that undo what the repository's own config could make git run or rewrite.

    `run_git` adds them to every command itself; a caller passing them again changes nothing.
    """
    listed = _spawn(project_root, ["config", "--list", "--show-scope", "--includes", "-z"])
    if listed.returncode == 0:
        entries = hardening.parse_config_list(listed.stdout, with_scope=True)
    else:  # a git older than 2.26 has no --show-scope: read the repository's config alone
        local = _spawn(project_root, ["config", "--local", "--list", "--includes", "-z"])
        entries = hardening.parse_config_list(local.stdout, with_scope=False) if local.returncode == 0 else []
    try:
        return hardening.neutral_overrides(entries)
    except hardening.UnsafeConfig as err:
        raise CheckpointError(str(err)) from err


def run_git(
    project_root: Path, *args: str, index_file: Path | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run git in `project_root`, hardened, without a terminal, to the end; raise CheckpointError if it cannot run.

    Git gets a session of its own, so a signal to the run's process group does not reach it,
    and an interrupt (Ctrl-C, SIGTERM) raised here waits for git to finish before it goes on:
    a commit is never torn halfway. A second interrupt leaves git to finish on its own.
    `index_file` makes git use that index instead of the repository's (`GIT_INDEX_FILE`),
    leaving the user's staging area alone. `stdin` is written to git's standard input (a commit
    message with `-F -`: no argument list to overflow, whatever its length).
    """
    refused = refused_repository(project_root)
    if refused is not None:
        raise CheckpointError(
            f"{refused} appeared during a run that started without one (an agent's command can make one): "
            "orchestrate runs no git on it"
        )
    before, subcommand, rest = hardening.split_arguments(args)
    if subcommand is None or subcommand in ("--version", "version"):
        return _spawn(project_root, list(args), index_file=index_file, stdin=stdin)
    nested: list[str] = []
    if hardening.needs_nested(subcommand):
        nested = _nested_repositories(project_root, index_file)
    try:
        after = hardening.subcommand_arguments(subcommand, rest, nested)
    except ValueError as err:
        raise CheckpointError(str(err)) from err
    neutral = [] if subcommand in hardening.CONFIG_FREE else safe_config(project_root)
    argv = [*before, *neutral, *hardening.always_options(), subcommand, *after]
    return _spawn(project_root, argv, index_file=index_file, stdin=stdin, described=args)


def _nested_repositories(project_root: Path, index_file: Path | None) -> list[str]:
    """Gitlinks in the index and nested repositories in the tree below `project_root`: what `git add` leaves out."""
    staged = _spawn(project_root, ["ls-files", "-s", "-z"], index_file=index_file)
    untracked = _spawn(project_root, ["ls-files", "-o", "-z", "--exclude-standard"], index_file=index_file)
    for listed in (staged, untracked):
        if listed.returncode != 0:
            raise git_error("git ls-files", listed)
    return hardening.nested_paths(staged.stdout, untracked.stdout)


def _spawn(
    project_root: Path, args: list[str], *, index_file: Path | None = None, stdin: str | None = None,
    described: tuple[str, ...] | None = None,
) -> subprocess.CompletedProcess[str]:
    """git `args` in `project_root`, with the options every git gets, waited for to the end."""
    # No secrets, no prompts, no pager: a program git started anyway would see no API key.
    env = dict(scrubbed_environment(), GIT_TERMINAL_PROMPT="0", GIT_PAGER="cat", GIT_EDITOR=":")
    if index_file is not None:
        env["GIT_INDEX_FILE"] = str(index_file)
    argv = ["git", *hardening.always_options(), *args]
    try:
        proc = subprocess.Popen(
            argv,
            cwd=project_root,
            env=env,
            stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            start_new_session=True,
        )
    except OSError as exc:
        # Only a git that is not there is "not installed": an argument list too long (E2BIG) or
        # a fork that failed is said as it is.
        if isinstance(exc, FileNotFoundError) and exc.filename == "git":
            raise CheckpointError("git is not installed or not on PATH") from exc
        reason = exc.strerror or str(exc)
        raise CheckpointError(f"could not run git in {project_root}: {reason}") from exc
    deadline = time.monotonic() + _GIT_TIMEOUT
    try:
        stdout, stderr = proc.communicate(input=stdin, timeout=_GIT_TIMEOUT)
    except subprocess.TimeoutExpired as exc:
        _kill(proc)
        raise CheckpointError(f"{_describe(described or tuple(args))} timed out after {_GIT_TIMEOUT:g} s") from exc
    except BaseException:
        try:
            proc.communicate(timeout=max(deadline - time.monotonic(), 0.0))
        except subprocess.TimeoutExpired:
            _kill(proc)
        raise
    return subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr)


def _kill(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    proc.communicate()


def check_git(
    project_root: Path, *args: str, index_file: Path | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run git and raise CheckpointError unless it succeeds."""
    result = run_git(project_root, *args, index_file=index_file, stdin=stdin)
    if result.returncode != 0:
        raise git_error(_describe(args), result)
    return result


def _describe(args: tuple[str, ...]) -> str:
    """`git <subcommand>` for messages, skipping `-c key=value` options."""
    words = [a for a in args if not a.startswith("-") and "=" not in a]
    return "git " + (words[0] if words else "")


def git_error(what: str, result: subprocess.CompletedProcess[str]) -> CheckpointError:
    detail = (result.stderr or result.stdout).strip() or f"exit status {result.returncode}"
    return CheckpointError(f"{what} failed: {detail}")


