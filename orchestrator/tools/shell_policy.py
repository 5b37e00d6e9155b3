"""The deny-list checked before the agent's bash commands run.

This is a seat belt against accidents and against the obvious spellings of a bad idea, not a
sandbox. Bash is a full programming language: a command can build any string at run time
(`$(printf ...)`, variables, base64, a script written to a file first) and no regular
expression can see through that. The real isolation is running the whole orchestrator in a
disposable container (see the README's Security section). What the deny-list does buy:
a model that reaches for `git push`, `sudo` or `rm -rf ~` gets a clear refusal and a reason,
instead of doing damage, and the refusal teaches it what not to try next.

Each rule is a regex and a reason. Rules are matched against the command as written and
against a copy with quotes and backslashes removed (so `rm -rf "/"` and `r\\m` count too).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Union

# What `with_extra` accepts: a regex, a (regex, reason) pair, {"pattern": .., "reason": ..}, a rule.
DenyEntry = Union[str, re.Pattern[str], tuple[str | re.Pattern[str], str], Mapping[str, str], "DenyRule"]

# Where a command word can start: beginning, after a separator or an opening bracket, or after
# wrappers that run their argument as a command. Keeps `grep sudo notes.txt` allowed.
_AT_COMMAND = (
    r"(?:^|[;&|({`\n]|\$\(|\b(?:then|do|else|exec|command|nohup|time|xargs|env|nice|timeout(?:\s+\S+)?)\s)"
    r"\s*(?:[A-Za-z_]\w*+=[^\s;&|(){}<>`]*+\s+)*"
)


def _command(word: str) -> str:
    """A regex matching `word` used as a command (not as an argument)."""
    return rf"{_AT_COMMAND}(?:[\w.~/-]*/)?(?:{word})(?=$|[\s;&|)])"


# `git` followed by global options (`-C dir`, `-c k=v`, `--no-pager`) and then a subcommand.
def _git(subcommand: str) -> str:
    return rf"{_command('git')}(?:\s+(?:-[Cc]\s+\S+|--?[\w-]+(?:=\S+)?))*\s+(?:{subcommand})\b"


@dataclass(frozen=True)
class DenyRule:
    """One deny-list entry: refuse a command that `pattern` finds, telling the model `reason`."""

    pattern: re.Pattern[str]
    reason: str
    needles: tuple[str, ...] = ()
    """Literal strings of which at least one must occur for the regex to be tried (speed only)."""

    def match(self, text: str) -> re.Match[str] | None:
        """The first match of the rule in `text`, if any."""
        if self.needles and not any(needle in text for needle in self.needles):
            return None
        if len(text) <= _WINDOW:
            return self.pattern.search(text)
        # Some rules backtrack over the rest of a simple command from every place a command
        # can start, which is quadratic in a long line; overlapping windows bound the work
        # while still seeing every match shorter than the overlap.
        for start in range(0, len(text), _WINDOW // 2):
            match = self.pattern.search(text, start, min(start + _WINDOW, len(text)))
            if match:
                return match
        return None


_WINDOW = 2048


def _compile(pattern: str | re.Pattern[str]) -> re.Pattern[str]:
    if isinstance(pattern, re.Pattern):
        return pattern
    try:
        return re.compile(pattern, re.MULTILINE)
    except re.error as err:
        raise ValueError(f"bad shell deny pattern {pattern!r}: {err}") from None


def _rule(pattern: str, reason: str, *, needles: tuple[str, ...]) -> DenyRule:
    return DenyRule(_compile(pattern), reason, needles)


# The names as path components, not as parts of longer names (`repo.git`, `.gitignore`).
_STATE = r"(?<![\w.-])\.autonomous(?![\w.-])"
_GIT_DIR = r"(?<![\w.-])\.git(?![\w.-])"
# Arguments up to the end of this simple command.
_ARGS = r"[^;&|\n]*"

# Git settings (case does not matter to git) that make it run a program or rewrite content
# by itself: set in .git/config they would act inside every later git command, the
# orchestrator's own checkpoint commits included. Reading or unsetting them is fine.
_GIT_CONFIG_RUNS_PROGRAMS = (
    r"(?i:core\.(?:hooksPath|fsmonitor|sshCommand|pager|editor|askPass|gitProxy|attributesFile|worktree"
    r"|autocrlf|eol|safecrlf)"
    r"|filter\.|diff\.external|diff\.\S+\.(?:command|textconv)|pager\.|include\.path|includeIf\."
    r"|alias\.|gpg\.|commit\.gpgSign|sequence\.editor|credential\.|merge\.\S+\.driver"
    r"|remote\.\S+\.(?:uploadpack|receivepack)|uploadpack\.packObjectsHook|submodule\.\S+\.update"
    r"|interactive\.diffFilter|trailer\.\S+\.(?:command|cmd)|(?:diff|merge)tool\.)"
)

_RM_RECURSIVE = rf"{_command('rm')}(?={_ARGS}\s(?:-[a-zA-Z]*[rR]|--recursive))"
_DANGEROUS_TARGET = (
    r"(?:/\*?|~/?\*?|\$\{?HOME\}?/?\*?|\.\.(?:/\S*)?"
    r"|/(?:bin|boot|dev|etc|home|lib|lib64|opt|proc|root|sbin|srv|sys|usr|var|Users|System)/?\*?)"
)

DEFAULT_RULES: tuple[DenyRule, ...] = (
    _rule(
        rf"{_RM_RECURSIVE}{_ARGS}\s{_DANGEROUS_TARGET}(?=$|[\s;&|)])",
        "it deletes files outside the project (/, ~, .. or a system directory)",
        needles=("rm",),
    ),
    _rule(r"--no-preserve-root", "it disables rm's guard against deleting /", needles=("--no-preserve-root",)),
    _rule(
        _command(r"sudo|doas|su|pkexec"),
        "the agent runs without elevated privileges",
        needles=("sudo", "doas", "su", "pkexec"),
    ),
    _rule(
        rf"(?:>|>>|&>)\s*\S*{_STATE}",
        "the orchestrator's state in .autonomous/ is not writable by the agent",
        needles=(".autonomous",),
    ),
    _rule(
        rf"{_command(r'cp|mv|rm|rmdir|tee|touch|truncate|ln|install|rsync|chmod|chown|mkdir|unlink|shred|dd')}"
        rf"{_ARGS}{_STATE}",
        "the orchestrator's state in .autonomous/ is not writable by the agent",
        needles=(".autonomous",),
    ),
    _rule(
        rf"{_command(r'sed|perl|ruby')}{_ARGS}\s(?:-[a-zA-Z]*i|--in-place){_ARGS}{_STATE}",
        "the orchestrator's state in .autonomous/ is not writable by the agent",
        needles=(".autonomous",),
    ),
    _rule(
        rf"{_command('find')}{_ARGS}{_STATE}{_ARGS}\s-(?:delete|exec)",
        "the orchestrator's state in .autonomous/ is not writable by the agent",
        needles=(".autonomous",),
    ),
    _rule(
        rf"open\([^)\n]*{_STATE}[^)\n]*,\s*['\"][wax+]|{_STATE}[^\n]*\.(?:write_text|write_bytes|unlink|rmdir)\(",
        "the orchestrator's state in .autonomous/ is not writable by the agent",
        needles=(".autonomous",),
    ),
    _rule(
        rf"{_command(r'cd|pushd')}\s+\S*{_STATE}",
        "commands do not run inside .autonomous/ (the orchestrator's state); read files there by path",
        needles=(".autonomous",),
    ),
    _rule(
        rf"(?:>|>>|&>)\s*\S*{_GIT_DIR}",
        "the repository's internals in .git/ are not writable by the agent (hooks there would run "
        "outside the agent's sandbox)",
        needles=(".git",),
    ),
    _rule(
        rf"{_command(r'cp|mv|rm|tee|touch|truncate|ln|install|rsync|chmod|dd')}{_ARGS}{_GIT_DIR}",
        "the repository's internals in .git/ are not writable by the agent (hooks there would run "
        "outside the agent's sandbox)",
        needles=(".git",),
    ),
    _rule(
        _git(r"config") + rf"(?!{_ARGS}\s(?:--get\S*|--list|-l|get|list|--unset\S*|unset|--remove-section)(?=\s|$))"
        + rf"{_ARGS}(?<![\w.-]){_GIT_CONFIG_RUNS_PROGRAMS}",
        "git would then run a program or rewrite files by itself in later git commands (filters, hooks, "
        "fsmonitor, pager, includes); run the program yourself instead",
        needles=("git",),
    ),
    _rule(
        _git("push"),
        "publishing is the user's decision; the orchestrator commits checkpoints itself",
        needles=("git",),
    ),
    _rule(
        _git("reset") + rf"{_ARGS}(?:--hard|--keep|--merge|--soft|\bHEAD[~^@]|\b[0-9a-f]{{7,40}}\b)",
        "it moves or discards the orchestrator's checkpoint commits; use `git checkout -- <file>` "
        "or `git stash` to drop your own changes",
        needles=("git",),
    ),
    _rule(
        _git(r"rebase|filter-branch|filter-repo|update-ref|replace")
        + r"|"
        + _git("commit")
        + rf"{_ARGS}--amend"
        + r"|"
        + _git("reflog")
        + r"\s+(?:expire|delete)",
        "it rewrites the history of the orchestrator's checkpoint commits",
        needles=("git",),
    ),
    _rule(
        _git("branch") + rf"{_ARGS}\s(?:-[a-zA-Z]*[DfM]\b|--force\b|--delete\b)"
        + r"|"
        + _git("tag") + rf"{_ARGS}\s(?:-d\b|--delete\b)",
        "it deletes or moves branches or tags the orchestrator relies on",
        needles=("git",),
    ),
    _rule(
        _git("clean") + rf"{_ARGS}\s-[a-zA-Z]*[xX]" + r"|" + _git("stash") + rf"{_ARGS}\s(?:-a\b|--all\b)",
        "it would delete ignored files, including the orchestrator's state in .autonomous/",
        needles=("git",),
    ),
    _rule(
        rf"{_command(r'curl|wget|fetch')}[^;&\n]*\|\s*(?:sudo\s+)?(?:env\s+)?(?:\S*/)?(?:ba|z|da|k|fi)?sh\b"
        r"|(?:ba|z|da|k)?sh\s+<\(\s*(?:curl|wget)\b"
        r"|(?:ba|z|da|k)?sh\s+-c\s+\S*\$\(\s*(?:curl|wget)\b",
        "it runs code downloaded from the network without looking at it; download it to a file "
        "and read it first",
        needles=("curl", "wget", "fetch"),
    ),
    _rule(
        _command(r"mkfs(?:\.\w+)?|mkswap|fdisk|sfdisk|parted|wipefs"),
        "it formats or repartitions a disk",
        needles=("mkfs", "mkswap", "fdisk", "parted", "wipefs"),
    ),
    _rule(
        rf"{_command('dd')}{_ARGS}\bof=/dev/(?!null\b|zero\b|stdout\b|stderr\b|fd/)"
        r"|>\s*/dev/(?:sd|hd|nvme|vd|xvd|mmcblk|disk)\w*",
        "it writes to a raw device",
        needles=("/dev/",),
    ),
    _rule(
        r":\s*\(\s*\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;?\s*:"
        r"|\b(\w+)\s*\(\s*\)\s*\{[^}]*\b\1\s*\|\s*\1\s*&",
        "it is a fork bomb",
        needles=("{",),
    ),
    _rule(
        rf"{_command(r'chmod|chown|chgrp')}(?={_ARGS}\s-[a-zA-Z]*R){_ARGS}"
        r"\s(?:/|~|\$\{?HOME\}?)/?(?=$|[\s;&|])",
        "it changes permissions of the whole system or home directory",
        needles=("chmod", "chown", "chgrp"),
    ),
    _rule(
        _command(r"shutdown|reboot|halt|poweroff|init\s+[06]|telinit\s+[06]")
        + r"|"
        + _command("systemctl")
        + r"\s+(?:poweroff|reboot|halt|kexec|suspend|hibernate)",
        "it shuts down or restarts the machine",
        needles=("shutdown", "reboot", "halt", "poweroff", "init", "systemctl"),
    ),
    _rule(
        _command(r"killall|pkill") + r"|" + _command("kill") + rf"{_ARGS}\s(?:--\s+)?-1(?=\s*(?:$|[;&|]))",
        "it could kill the orchestrator itself; stop your own processes by pid",
        needles=("kill",),
    ),
    _rule(
        r"/proc/\S*environ|" + _command("ps") + r"\s+[a-zA-Z]*e[a-zA-Z]*(?=$|\s)",
        "it reads other processes' environments, which may hold credentials",
        needles=("environ", "ps"),
    ),
)


@dataclass(frozen=True)
class ShellPolicy:
    """A deny-list checked before a bash command runs; the first matching rule refuses it."""

    deny: tuple[DenyRule, ...] = ()

    def __post_init__(self) -> None:
        # Accept plain (regex, reason) pairs too, as written in configuration or tests.
        object.__setattr__(self, "deny", tuple(_as_rule(entry) for entry in self.deny))

    @classmethod
    def default(cls) -> ShellPolicy:
        """The built-in rules (`DEFAULT_RULES`)."""
        return cls(DEFAULT_RULES)

    @classmethod
    def empty(cls) -> ShellPolicy:
        """No rules at all (for a user who isolates the agent some other way)."""
        return cls()

    def with_extra(self, entries: Iterable[DenyEntry]) -> ShellPolicy:
        """A copy with more rules: regex strings, compiled patterns, (regex, reason) pairs or `DenyRule`s.

        Raises ValueError naming a bad regex, so a typo in `orchestrate.toml` is a config error.
        """
        return ShellPolicy((*self.deny, *(_as_rule(entry) for entry in entries)))

    def refusal(self, command: str) -> str | None:
        """Why `command` is refused (a message for the model), or None if no rule matches."""
        for text in _variants(command):
            for rule in self.deny:
                match = rule.match(text)
                if match:
                    return f"refused by the shell policy: {_quote(match.group(0))}: {rule.reason}"
        return None


_CONFIGURED_REASON = "it matches a deny rule in this project's configuration ([security] deny)"


def _as_rule(entry: DenyEntry) -> DenyRule:
    if isinstance(entry, DenyRule):
        return entry
    if isinstance(entry, tuple):
        pattern, reason = entry
        return DenyRule(_compile(pattern), reason or _CONFIGURED_REASON)
    if isinstance(entry, Mapping):
        if not isinstance(entry.get("pattern"), str):
            raise ValueError(f"shell deny entry {dict(entry)!r} needs a 'pattern' string")
        return DenyRule(_compile(entry["pattern"]), str(entry.get("reason") or _CONFIGURED_REASON))
    if not isinstance(entry, (str, re.Pattern)):
        raise ValueError(f"shell deny entry {entry!r} is not a regex string")
    return DenyRule(_compile(entry), _CONFIGURED_REASON)


def _variants(command: str) -> Sequence[str]:
    """The command as written, and with quoting removed, so quoting cannot hide a match."""
    joined = command.replace("\\\n", "")
    unquoted = re.sub(r"[\"'\\]", "", joined)
    unquoted = re.sub(r"[ \t]+", " ", unquoted)
    return (command,) if unquoted == command else (command, unquoted)


def _quote(fragment: str) -> str:
    text = " ".join(fragment.split())
    text = text.lstrip(";&|({`$ ")
    if len(text) > 60:
        text = text[:57] + "..."
    return f"'{text}'" if text else "this command"
