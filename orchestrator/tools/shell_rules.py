"""The built-in deny rules of the shell policy (`DEFAULT_RULES`) and what a rule is (`DenyRule`).

Each rule is a regex and a reason the model is told. The regexes are built from a few pieces:
`_command` matches a word used as a command (not as an argument), `_git` a git subcommand after
git's global options, `_STATE`/`_GIT_DIR` the orchestrator's directories as path components.
Why a deny-list at all, and what it cannot do, is in `shell_policy`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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


def compile_pattern(pattern: str | re.Pattern[str]) -> re.Pattern[str]:
    if isinstance(pattern, re.Pattern):
        return pattern
    try:
        return re.compile(pattern, re.MULTILINE)
    except re.error as err:
        raise ValueError(f"bad shell deny pattern {pattern!r}: {err}") from None


def _rule(pattern: str, reason: str, *, needles: tuple[str, ...]) -> DenyRule:
    return DenyRule(compile_pattern(pattern), reason, needles)


# The names as path components, not as parts of longer names (`repo.git`, `.gitignore`).
_STATE = r"(?<![\w.-])\.autonomous(?![\w.-])"
_GIT_DIR = r"(?<![\w.-])\.git(?![\w.-])"
_RUN_CONFIG = r"(?<![\w.-])orchestrate\.toml(?![\w.-])"
_RUN_CONFIG_REASON = "orchestrate.toml is the run's configuration (sandbox, limits, prices); the agent may not change it"
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
    _rule(rf"(?:>|>>|&>)\s*\S*{_RUN_CONFIG}", _RUN_CONFIG_REASON, needles=("orchestrate.toml",)),
    _rule(
        rf"{_command(r'cp|mv|rm|tee|touch|truncate|ln|install|rsync|chmod|unlink|shred|dd')}{_ARGS}{_RUN_CONFIG}"
        rf"|{_command(r'sed|perl|ruby')}{_ARGS}\s(?:-[a-zA-Z]*i|--in-place){_ARGS}{_RUN_CONFIG}"
        rf"|open\([^)\n]*{_RUN_CONFIG}[^)\n]*,\s*['\"][wax+]|{_RUN_CONFIG}[^\n]*\.(?:write_text|write_bytes|unlink)\(",
        _RUN_CONFIG_REASON, needles=("orchestrate.toml",),
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
