"""What makes a git command safe to run on a tree the agent wrote: the options `run_git` adds to every one.

The agent controls the work tree and, in ways the sandbox cannot always stop, files git reads
there: `.gitattributes`, `.gitmodules`, a submodule's git directory (its `.git` gitfile can be
swapped for a writable copy with its own config and `info/attributes`), a repository it makes
itself. Git runs programs from configuration (filters, textconv, diff and merge drivers, hooks,
fsmonitor, credential helpers, ...). So every git the program starts:

- never enters a submodule or a nested repository: `--ignore-submodules=all` where a command
  looks at work trees (a `.gitmodules` `ignore = none` cannot undo a command-line option),
  `diff.ignoreSubmodules`, `submodule.recurse` off, and `git add` told to leave every gitlink
  and nested repository out (it would otherwise run `git status` inside each one);
- reads no program-running setting from the repository's own config (`.git/config`, its
  worktree config and whatever they include): each is overridden on the command line, back to
  the user's global or system value where there is one (a git-lfs set up there keeps
  working), else to a value that does nothing (`neutral_overrides`);
- runs no hook and no fsmonitor, whatever any config says, and accepts no bare repository it
  was not pointed at (`safe.bareRepository=explicit`).
"""

from __future__ import annotations

import re

from orchestrator.user_errors import OrchestrateError

# Set on every git, whatever any config says.
ALWAYS: dict[str, str] = {
    "core.hooksPath": "/dev/null",
    "core.fsmonitor": "false",
    "core.pager": "cat",
    "diff.external": "",
    # A checkpoint must be quick and leave nothing running: no gc or maintenance behind it.
    "gc.auto": "0",
    "maintenance.auto": "false",
    # Never into a submodule: its git directory may be the agent's copy, with its own config.
    "submodule.recurse": "false",
    "diff.ignoreSubmodules": "all",
    "status.submoduleSummary": "false",
    "fetch.recurseSubmodules": "false",
    # A bare repository the agent laid out in the project (HEAD, objects/, refs/, config) is
    # never picked up by discovery; only read from protected (command-line) configuration.
    "safe.bareRepository": "explicit",
}
# Keys (lower case, as `git config --list` prints them) that run a program or change what is
# committed, each with the value that turns it off.
_NEUTRAL: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.DOTALL), value)
    for pattern, value in (
        (r"filter\..+\.(clean|smudge|process)", ""),
        (r"filter\..+\.required", "false"),
        (r"diff\..+\.(command|textconv)", ""),
        (r"merge\..+\.driver", "false"),  # a conflict, for the conflict step, rather than a program
        (r"core\.(editor|askpass|sshcommand|gitproxy)", ""),
        (r"credential\.(.+\.)?helper", ""),
        (r"sequence\.editor", ""),
        (r"pager\..+", "false"),
        (r"core\.attributesfile", ""),
        (r"core\.(autocrlf|safecrlf)", "false"),
        (r"core\.eol", "native"),
        (r"commit\.gpgsign", "false"),
        (r"(log\.showsignature|merge\.verifysignatures)", "false"),
        (r"gpg\.program", "gpg"),
        (r"gpg\.format", "openpgp"),
        (r"gpg\.ssh\.program", "ssh-keygen"),
        (r"gpg\.x509\.program", "gpgsm"),
        (r"gpg\.ssh\.defaultkeycommand", ""),
    )
)
_TRUSTED_SCOPES = ("system", "global", "command")
# Subcommands that compare work trees: told on their own command line to leave submodules alone.
_IGNORE_SUBMODULES = frozenset({"status", "diff", "diff-files", "diff-index"})
# Subcommands that read refs, objects or config only: no content goes through a filter, driver or
# helper, so the repository's config need not be listed first (the options of `ALWAYS` still apply).
CONFIG_FREE = frozenset({
    "rev-parse", "config", "check-ref-format", "symbolic-ref", "show-ref", "for-each-ref", "update-ref", "init",
    "ls-tree", "write-tree", "check-ignore",
})
# Subcommands that exist to enter submodules or to save work trees wholesale: never run.
_REFUSED = frozenset({"submodule", "stash"})


class UnsafeConfig(OrchestrateError):
    """The repository's config sets a key that cannot be overridden on the command line."""


def always_options() -> list[str]:
    return [option for key, value in ALWAYS.items() for option in ("-c", f"{key}={value}")]


def neutral_overrides(entries: list[tuple[str, str, str | None]]) -> list[str]:
    """`-c` options undoing each program-running key the repository's own config sets.

    `entries` is `parse_config_list`'s (scope, key, value); scopes other than system, global and
    command are the repository's. Raises UnsafeConfig for a key that `-c` cannot name.
    """
    # A key given without "=" is a boolean true.
    trusted = {key: "true" if value is None else value for scope, key, value in entries if scope in _TRUSTED_SCOPES}
    always = {key.lower() for key in ALWAYS}
    overrides: dict[str, str] = {}
    for scope, key, _value in entries:
        if scope in _TRUSTED_SCOPES or key in always:
            continue
        neutral = next((value for pattern, value in _NEUTRAL if pattern.fullmatch(key)), None)
        if neutral is None:
            continue
        if "=" in key:  # `-c` splits at the first "=": such a key cannot be overridden
            raise UnsafeConfig(
                f"the repository's git config sets {key!r}, which orchestrate cannot switch off; "
                "remove it with `git config --unset` and run again"
            )
        overrides[key] = trusted.get(key, neutral)
    return [option for key, value in overrides.items() for option in ("-c", f"{key}={value}")]


def parse_config_list(text: str, *, with_scope: bool) -> list[tuple[str, str, str | None]]:
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


def split_arguments(args: tuple[str, ...]) -> tuple[list[str], str | None, list[str]]:
    """A git argument list as (options before the subcommand, the subcommand, what follows it)."""
    index = 0
    while index < len(args):
        if args[index] == "-c":
            index += 2
        elif args[index].startswith("-"):
            index += 1
        else:
            return list(args[:index]), args[index], list(args[index + 1:])
    return list(args), None, []


def subcommand_arguments(subcommand: str, rest: list[str], nested: list[str]) -> list[str]:
    """`rest` (what follows `subcommand`) with what keeps it out of submodules and nested repositories.

    `nested` lists, relative to git's directory, the gitlinks and nested repositories `git add`
    must leave out. Raises ValueError for a subcommand the program never runs on a work tree.
    """
    if subcommand in _REFUSED:
        raise ValueError(f"git {subcommand} is never run by orchestrate: it would enter submodules")
    if subcommand in _IGNORE_SUBMODULES:
        return ["--ignore-submodules=all", *rest]
    if subcommand == "add" and nested:
        if "--" not in rest:
            raise ValueError("git add is run with its paths after `--`, so that nested repositories can be left out")
        return [*rest, *(f":(exclude,literal){path}" for path in nested)]
    return rest


def needs_nested(subcommand: str | None) -> bool:
    return subcommand == "add"


def nested_paths(staged: str, untracked: str) -> list[str]:
    """Gitlinks (from `ls-files -s -z`) and nested repositories (from `ls-files -o -z`, the entries
    ending in "/": git lists a directory alone only when it holds a repository of its own)."""
    paths: list[str] = []
    for entry in staged.split("\0"):
        meta, tab, path = entry.partition("\t")
        if tab and meta.startswith("160000 "):
            paths.append(path)
    paths.extend(entry.rstrip("/") for entry in untracked.split("\0") if entry.endswith("/"))
    return paths
