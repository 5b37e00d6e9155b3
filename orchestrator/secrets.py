"""Keeping credentials away from the agent and out of everything we write or print.

Two jobs:

- `scrubbed_environment()` builds the environment for processes the agent controls (its bash
  commands) and for the feature checks: no `ANTHROPIC_*` variable, nothing whose name looks
  like a credential, nothing whose value looks like an Anthropic key.
- `redact()` / `redact_value()` replace the API key (and anything shaped like one) with
  `[REDACTED]` in text and in JSON-like values before they reach a file, a log or a screen.
- `hide_own_secrets()` wipes the credentials from this process's environment block as the
  kernel shows it (`/proc/<pid>/environ`), and marks the process not dumpable, so that a
  command of the agent cannot read the key from its parent, the orchestrator. Python's
  `os.environ` is a copy made at start-up and keeps working.

Name patterns are shell-style globs (`*TOKEN*`, `AWS_*`), matched case-insensitively against
the whole variable name; users add their own with `[security] secret_env_patterns`.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import fnmatch
import functools
import os
import re
import sys
from typing import Any, Iterable, Mapping, Sequence

REDACTED = "[REDACTED]"

# Variables whose *values* are the credentials this program itself uses.
SECRET_VALUE_VARIABLES: tuple[str, ...] = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")

# Names that look like credentials. Deliberately broad: a build that needs one of these can
# get it back through `ToolContext.env`, but a leaked token cannot be taken back.
DEFAULT_SECRET_ENV_PATTERNS: tuple[str, ...] = (
    "ANTHROPIC_*",
    "CLAUDE_*",
    "*KEY*",
    "*TOKEN*",
    "*SECRET*",
    "*PASSWORD*",
    "*PASSWD*",
    "*PASSPHRASE*",
    "*CREDENTIAL*",
    "*AUTH*",
    "*COOKIE*",
    "*PRIVATE*",
    "*_PAT",
    "AWS_*",
    "AZURE_*",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GITHUB_TOKEN",
    "GH_*",
    "NPM_CONFIG_*AUTH*",
)

# Anthropic keys look like `sk-ant-api03-<base64url>` / `sk-ant-admin01-...`. The body length
# floor keeps prose such as "sk-ant-..." in documentation readable.
_KEY_SHAPE = re.compile(r"sk-ant-[A-Za-z0-9_-]{16,}")
_KEY_PREFIX = "sk-ant-"

# Shorter values are not plausible credentials and redacting them would mangle ordinary text.
MIN_SECRET_LENGTH = 8


def is_secret_name(name: str, patterns: Iterable[str] = DEFAULT_SECRET_ENV_PATTERNS) -> bool:
    """True if the environment variable `name` matches one of the glob `patterns` (any case)."""
    upper = name.upper()
    return any(fnmatch.fnmatchcase(upper, pattern.upper()) for pattern in patterns)


def scrubbed_environment(
    base: Mapping[str, str] | None = None, extra_patterns: Sequence[str] = ()
) -> dict[str, str]:
    """A copy of `base` (default `os.environ`) without anything that looks like a secret.

    Drops variables whose name matches `DEFAULT_SECRET_ENV_PATTERNS` or `extra_patterns`, and
    any variable whose value contains an Anthropic-shaped key or the value of a known secret
    (so `MY_VAR=$ANTHROPIC_API_KEY` does not smuggle the key through under another name).
    """
    source = os.environ if base is None else base
    patterns = (*DEFAULT_SECRET_ENV_PATTERNS, *extra_patterns)
    # The key the orchestrator itself runs with counts even when `base` is another mapping.
    secrets = {*known_secret_values(), *known_secret_values(source)}
    clean: dict[str, str] = {}
    for name, value in source.items():
        if is_secret_name(name, patterns):
            continue
        if _KEY_SHAPE.search(value) or any(secret in value for secret in secrets):
            continue
        clean[name] = value
    return clean


def known_secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """The values of `ANTHROPIC_API_KEY` / `ANTHROPIC_AUTH_TOKEN` that are set (long enough to redact)."""
    source = os.environ if environ is None else environ
    values = {source.get(name, "").strip() for name in SECRET_VALUE_VARIABLES}
    return sorted(v for v in values if len(v) >= MIN_SECRET_LENGTH)


def redact(text: str, secrets: Iterable[str] | None = None) -> str:
    """`text` with every known secret value and every Anthropic-shaped key replaced by `[REDACTED]`.

    The known values are those of `known_secret_values()` plus `secrets`.
    """
    if not text:
        return text
    values = set(known_secret_values())
    if secrets is not None:
        values.update(s for s in secrets if isinstance(s, str) and len(s) >= MIN_SECRET_LENGTH)
    # Fast path: substring tests are far cheaper than the regex on large texts (state, logs).
    if _KEY_PREFIX not in text and not any(value in text for value in values):
        return text
    return _pattern_for(frozenset(values)).sub(REDACTED, text)


def redact_value(value: Any, secrets: Iterable[str] | None = None) -> Any:
    """`value` with `redact()` applied to every string in it (dict keys and values, lists, tuples)."""
    extra = list(secrets) if secrets is not None else None
    return _redact_value(value, extra)


def _redact_value(value: Any, secrets: list[str] | None) -> Any:
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return {_redact_value(k, secrets): _redact_value(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_value(item, secrets) for item in value]
    if isinstance(value, tuple):
        return tuple(_redact_value(item, secrets) for item in value)
    return value


@functools.lru_cache(maxsize=32)
def _pattern_for(values: frozenset[str]) -> re.Pattern[str]:
    # Longest first, so a secret that contains another is replaced whole.
    literals = [re.escape(v) for v in sorted(values, key=len, reverse=True)]
    return re.compile("|".join([*literals, _KEY_SHAPE.pattern]))


def hide_own_secrets(patterns: Iterable[str] = DEFAULT_SECRET_ENV_PATTERNS) -> list[str]:
    """Keep this process's credentials from other processes of the same user; Linux only.

    The kernel shows a process's environment as it was at start-up, in
    `/proc/<pid>/environ`, readable by every process of the same user: the agent's commands
    and the checks (`cat /proc/$PPID/environ`, or a test that reads its grandparent's). This
    overwrites, in place, the values of variables that look like credentials (the names of
    `patterns`, values shaped like an Anthropic key) with NUL bytes, then marks the process
    not dumpable, which also closes `/proc/<pid>/mem` and ptrace to processes without
    CAP_SYS_PTRACE. `os.environ` is unaffected (Python copied it at start-up), so the SDK
    still finds the key. Returns the names wiped; never raises.

    Not covered: the process that started the orchestrator (a shell, a CI runner) still has
    the key in its own environment, and root (with CAP_SYS_PTRACE) can read any memory.
    """
    if not sys.platform.startswith("linux"):
        return []
    wiped = _wipe_environ_block(patterns)
    _set_not_dumpable()
    return wiped


def _wipe_environ_block(patterns: Iterable[str]) -> list[str]:
    try:
        with open("/proc/self/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        # Fields 50 and 51 (1-based, counting pid and comm) are env_start and env_end.
        start, end = int(fields[47]), int(fields[48])
        if not 0 < start < end or end - start > 16 * 1024 * 1024:
            return []
        with open("/proc/self/mem", "r+b", buffering=0) as mem:
            mem.seek(start)
            block = bytearray(mem.read(end - start))
            wiped = _wipe_values(block, tuple(patterns))
            if wiped:
                mem.seek(start)
                mem.write(bytes(block))
        return wiped
    except (OSError, ValueError, IndexError, OverflowError):
        return []


def _wipe_values(block: bytearray, patterns: tuple[str, ...]) -> list[str]:
    """NUL out, in `block` (NUL-separated NAME=value entries), the values of secret variables."""
    wiped = []
    offset = 0
    for entry in bytes(block).split(b"\0"):
        name, sep, value = entry.partition(b"=")
        if sep and value:
            text_name = name.decode("utf-8", "replace")
            text_value = value.decode("utf-8", "replace")
            if is_secret_name(text_name, patterns) or _KEY_SHAPE.search(text_value):
                begin = offset + len(name) + 1
                block[begin:begin + len(value)] = bytes(len(value))
                wiped.append(text_name)
        offset += len(entry) + 1
    return wiped


def _set_not_dumpable() -> None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        pr_set_dumpable = 4
        libc.prctl(pr_set_dumpable, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass
