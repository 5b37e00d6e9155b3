"""Claude Code's sign-in kept out of the agent's reach, while the CLI itself still uses it.

On a Claude plan the CLI signs in with the token in `~/.claude/.credentials.json` (its account
in `~/.claude.json`), in the home it runs with. The CLI reads those files itself; the agent it
drives must not, through either of its two ways of reading:

- its file tools (Read, Grep, Glob, ...) run in the CLI's own process: the write guard refuses
  any whose path is, lies under, or (for a search) contains the sign-in (`sign_in_refusal`);
- its commands (Bash) run through `CLAUDE_CODE_SHELL_PREFIX`, which the CLI puts before every
  command line it runs: under bubblewrap that is `shell_prefix`, a nested sandbox where
  `~/.claude` is an empty directory (its shell snapshots shown read-only, which the CLI sources
  before each command) and `~/.claude.json` is empty, in a PID namespace of its own so that
  `/proc/<the CLI>/root` cannot lead back to the real files. Without a sandbox the agent's
  commands can read the sign-in as they can any file of the user's (docs/claude-code.md says so).

In api-key mode the CLI's home is an empty one of the attempt and holds no sign-in; the same
rules apply there, as defence in depth. This program never reads these files: it only names them.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from pathlib import Path

from orchestrator.claude_code.guards.sandbox_view import SandboxView, Unresolvable
from orchestrator.json_types import ToolInput

# What the CLI's environment holds that lets a process call the model as the run: the metering
# proxy's address and key (api-key mode), a sign-in token. Its commands get none of them.
CLI_CREDENTIALS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "CLAUDE_CODE_OAUTH_TOKEN",
                   "ANTHROPIC_CUSTOM_HEADERS")
SIGN_IN_NAMES = (".claude", ".claude.json")  # under the home: the credentials, and the account
SHELL_SNAPSHOTS = Path(".claude") / "shell-snapshots"  # the CLI sources one before each command
# The input keys naming what each file tool reads or writes, or (searches) where it looks.
PATH_KEYS = {"Read": "file_path", "Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path",
             "NotebookRead": "notebook_path", "NotebookEdit": "notebook_path"}
SEARCH_KEYS = {"Grep": "path", "Glob": "path", "LS": "path"}
_GLOB_CHARACTERS = frozenset("*?[{")


def sign_in_paths(home: Path) -> tuple[Path, ...]:
    """The sign-in's files in `home`, symbolic links resolved (whether they exist or not)."""
    return tuple(Path(os.path.realpath(home / name)) for name in SIGN_IN_NAMES)


def sign_in_refusal(
    tool_name: str, tool_input: ToolInput, home: Path, cwd: Path, view: SandboxView | None = None,
) -> str | None:
    """Why a file tool may not run with `tool_input`: it would read (or change) the sign-in; None when it may.
    Paths are resolved in `view`, the CLI's sandbox (None: no sandbox, this process's view)."""
    view = view or SandboxView(None)
    try:
        guarded = {*sign_in_paths(home), *(view.resolve(home / name) for name in SIGN_IN_NAMES)}
        targets = _targets(tool_name, tool_input, home, cwd, view)
    except Unresolvable as err:
        return f"{tool_name}: {err}, so it may lead to Claude Code's sign-in, which the agent may not read"
    for path, search in targets:
        for secret in guarded:
            if path == secret or secret in path.parents or (search and path in secret.parents):
                return (f"{tool_name}: {secret.name} in the home holds Claude Code's sign-in, which the agent "
                        "may not read or change")
    return None


def _targets(tool_name: str, tool_input: ToolInput, home: Path, cwd: Path,
             view: SandboxView) -> list[tuple[Path, bool]]:
    """The paths the tool would touch, resolved as the CLI resolves them, each with whether it is a search root."""
    key = PATH_KEYS.get(tool_name)
    if key is not None:
        value = tool_input.get(key)
        return [(_resolved(value, home, cwd, view), False)] if isinstance(value, str) and value else []
    key = SEARCH_KEYS.get(tool_name)
    if key is None:
        return []
    value = tool_input.get(key)
    root = _resolved(value if isinstance(value, str) and value else ".", home, cwd, view)
    targets = [(root, True)]
    pattern = tool_input.get("pattern")
    if tool_name == "Glob" and isinstance(pattern, str):  # where the pattern's fixed part leads (`/..`, `../..`)
        targets.append((_resolved(_static_prefix(pattern) or ".", home, root, view), True))
    return targets


def _resolved(value: str, home: Path, cwd: Path, view: SandboxView) -> Path:
    if value == "~" or value.startswith("~/"):
        value = str(home) + value[1:]
    # As the CLI does: `..` taken lexically first (node's path.resolve), then the links, in its sandbox.
    return view.resolve(Path(os.path.normpath(cwd / value)))


def _static_prefix(pattern: str) -> str:
    """The directories of a glob pattern before its first wildcard: where the search starts."""
    parts: list[str] = []
    for part in pattern.split("/"):
        if _GLOB_CHARACTERS & set(part):
            break
        parts.append(part)
    return "/".join(parts) or ("/" if pattern.startswith("/") else "")


def shell_prefix(
    bwrap: str, shell: str, home: Path, seccomp: Path, environment: Mapping[str, str | None] | None = None,
) -> str:
    """The script for `CLAUDE_CODE_SHELL_PREFIX`: runs the command line the CLI gives it (one
    argument) in a nested bubblewrap with the sign-in in `home` masked, no capability, the
    sandbox's whole seccomp filter (the file `seccomp`; the CLI's own sandbox lets it make the
    namespaces this needs), none of the CLI's credentials in its environment (`CLI_CREDENTIALS`)
    and `environment`'s variables set (None: removed). The nested PID namespace also keeps the
    commands off the CLI's own bridges to the metering proxy and to its hosts
    (`sandbox_init.own_connection`). The files are looked at when each command runs: in api-key
    mode the CLI makes them after the script is written."""
    claude, account, snapshots = (shlex.quote(str(home / name)) for name in (*SIGN_IN_NAMES, SHELL_SNAPSHOTS))
    variables = [f"--unsetenv {name}" for name in CLI_CREDENTIALS]
    variables += [f"--setenv {name} {shlex.quote(value)}" if value is not None else f"--unsetenv {name}"
                  for name, value in (environment or {}).items()]
    return f"""#!/bin/sh
# Written by orchestrate for one Claude Code attempt: each agent command without the CLI's sign-in.
command="$1"
set -- --dev-bind / / --unshare-pid --proc /proc --die-with-parent --cap-drop ALL
set -- "$@" {" ".join(variables)}
if [ -d {claude} ]; then
  set -- "$@" --tmpfs {claude}
  if [ -d {snapshots} ]; then set -- "$@" --ro-bind {snapshots} {snapshots}; fi
fi
if [ -e {account} ]; then set -- "$@" --ro-bind /dev/null {account}; fi
exec {shlex.quote(bwrap)} "$@" --seccomp 9 -- {shlex.quote(shell)} -c "$command" 9<{shlex.quote(str(seccomp))}
"""
