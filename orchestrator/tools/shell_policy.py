"""The deny-list checked before the agent's bash commands run.

This is a seat belt against accidents and against the obvious spellings of a bad idea, not a
sandbox. Bash is a full programming language: a command can build any string at run time
(`$(printf ...)`, variables, base64, a script written to a file first) and no regular
expression can see through that. The real isolation is running the whole orchestrator in a
disposable container (see docs/security.md). What the deny-list does buy:
a model that reaches for `git push`, `sudo` or `rm -rf ~` gets a clear refusal and a reason,
instead of doing damage, and the refusal teaches it what not to try next.

Each rule is a regex and a reason (the built-in ones are in `shell_rules`). Rules are matched against the command as written and
against a copy with quotes and backslashes removed (so `rm -rf "/"` and `r\\m` count too).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from orchestrator.tools.shell_rules import DEFAULT_RULES, DenyRule, compile_pattern

# What `with_extra` accepts: a regex, a (regex, reason) pair, {"pattern": .., "reason": ..}, a rule.
DenyEntry = str | re.Pattern[str] | tuple[str | re.Pattern[str], str] | Mapping[str, str] | DenyRule

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


def configured_policy(deny: Sequence[str]) -> ShellPolicy:
    """The built-in rules plus a project's `[security] deny` regexes.

    Raises ValueError naming a bad regex: `orchestrate run` and `doctor` build the policy before
    anything starts, so a typo in orchestrate.toml stops the run, not its first command.
    """
    return ShellPolicy.default().with_extra(deny)


_CONFIGURED_REASON = "it matches a deny rule in this project's configuration ([security] deny)"


def _as_rule(entry: DenyEntry) -> DenyRule:
    if isinstance(entry, DenyRule):
        return entry
    if isinstance(entry, tuple):
        pattern, reason = entry
        return DenyRule(compile_pattern(pattern), reason or _CONFIGURED_REASON)
    if isinstance(entry, Mapping):
        if not isinstance(entry.get("pattern"), str):
            raise ValueError(f"shell deny entry {dict(entry)!r} needs a 'pattern' string")
        return DenyRule(compile_pattern(entry["pattern"]), str(entry.get("reason") or _CONFIGURED_REASON))
    if not isinstance(entry, (str, re.Pattern)):
        raise ValueError(f"shell deny entry {entry!r} is not a regex string")
    return DenyRule(compile_pattern(entry), _CONFIGURED_REASON)


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
