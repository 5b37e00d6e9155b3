"""How checkpoint git runs: outside the agent's reach, to the end, never half done.

Nothing the agent could have configured may run or change what is committed: no hooks, no
fsmonitor, no pager or external diff, and no setting from the repository's own config
(`.git/config` and whatever it includes) that runs a program or rewrites content (clean
filters, textconv, gpg programs, autocrlf, ...); those are overridden with `-c` (see
`safe_config`), back to the value from the user's global or system config if there is one
(so a git-lfs set up there keeps working), else to a setting that does nothing.

Each git runs in a session of its own and is waited for even when the run is interrupted: a
kill of the run's process group or a Ctrl-C cannot tear a commit and leave `.git/index.lock`
behind. Any failure to run git, or git failing, is a `CheckpointError` with git's own words.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

from orchestrator.safety.secrets import scrubbed_environment

# Long enough for `git add` in a big tree; short enough that a git waiting on something that
# never comes cannot stall a run for good.
_GIT_TIMEOUT = 300.0

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


def safe_config(project_root: Path) -> list[str]:
    """`-c` options that undo what the repository's own config could make git run or rewrite."""
    listed = run_git(project_root, "config", "--list", "--show-scope", "--includes", "-z")
    if listed.returncode == 0:
        entries = _parse_config_list(listed.stdout, with_scope=True)
    else:  # a git older than 2.26 has no --show-scope: read the repository's config alone
        local = run_git(project_root, "config", "--local", "--list", "--includes", "-z")
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


def run_git(
    project_root: Path, *args: str, index_file: Path | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run git in `project_root`, without a terminal, to the end; raise CheckpointError if it cannot run.

    Git gets a session of its own, so a signal to the run's process group does not reach it,
    and an interrupt (Ctrl-C, SIGTERM) raised here waits for git to finish before it goes on:
    a commit is never torn halfway. A second interrupt leaves git to finish on its own.
    `index_file` makes git use that index instead of the repository's (`GIT_INDEX_FILE`),
    leaving the user's staging area alone. `stdin` is written to git's standard input (a commit
    message with `-F -`: no argument list to overflow, whatever its length).
    """
    # No secrets, no hooks, no prompts: the agent can write .git/hooks by routes the shell
    # policy misses, and a hook run here would otherwise see the API key.
    env = dict(scrubbed_environment(), GIT_TERMINAL_PROMPT="0", GIT_PAGER="cat", GIT_EDITOR=":")
    if index_file is not None:
        env["GIT_INDEX_FILE"] = str(index_file)
    argv = ["git", *_always_options(), *args]
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


