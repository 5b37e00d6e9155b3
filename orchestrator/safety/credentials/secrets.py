"""Keeping credentials away from the agent, and knowing which values are credentials.


- `scrubbed_environment()` builds the environment for processes the agent controls (its bash
  commands) and for the feature checks: no `ANTHROPIC_*` variable, nothing whose name looks
  like a credential, nothing whose value looks like an Anthropic key.
- `own_secrets()` / `known_secret_values()`: the values of our own credential variables (and
  of the credentials file one names), which `orchestrator.safety.credentials.redaction` replaces with
  `[REDACTED]` in everything we write or print.

Hiding the key from the orchestrator's own `/proc/<pid>/environ`, is in
`orchestrator.safety.credentials.own_environ` (`hide_own_secrets`).

Name patterns are shell-style globs (`*TOKEN*`, `AWS_*`), matched case-insensitively against
the whole variable name; users add their own with `[security] secret_env_patterns`.
"""

from __future__ import annotations

import fnmatch
import functools
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence

# Variables whose *values* are the credentials this program itself uses, with each provider
# (`--provider anthropic|bedrock|vertex`).
SECRET_VALUE_VARIABLES: tuple[str, ...] = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN",
    "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK",
    "GOOGLE_OAUTH_ACCESS_TOKEN",
)
# A variable naming a file of credentials (Google's service-account or user JSON): the
# secrets in the file are redacted like the values above.
SECRET_FILE_VARIABLE = "GOOGLE_APPLICATION_CREDENTIALS"
_SECRET_FILE_KEYS = ("private_key", "private_key_id", "client_secret", "refresh_token")
_MAX_SECRET_FILE_BYTES = 1024 * 1024

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
KEY_SHAPE = re.compile(r"sk-ant-[A-Za-z0-9_-]{16,}")

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
        if KEY_SHAPE.search(value) or any(secret in value for secret in secrets):
            continue
        clean[name] = value
    return clean


def known_secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """The values of `ANTHROPIC_API_KEY` / `ANTHROPIC_AUTH_TOKEN` that are set (long enough to redact)."""
    if environ is None:
        return sorted(own_secrets().values)
    return sorted(_secret_values(_secret_sources(environ)))


class KnownSecrets:
    """The secret values to redact and the one pattern that finds them (and key-shaped text)."""

    __slots__ = ("pattern", "source", "values")

    def __init__(self, source: tuple[str | None, ...], values: frozenset[str]) -> None:
        self.source = source
        self.values = values
        self.pattern = _pattern_for(values)


_cached_secrets: KnownSecrets | None = None


def own_secrets() -> KnownSecrets:
    """The secrets of our own environment, rebuilt only when one of their variables changed.

    `redact` runs for every event, log line and state write; looking up two variables is
    all it costs while they stay the same.
    """
    global _cached_secrets
    source = tuple(map(os.environ.get, (*SECRET_VALUE_VARIABLES, SECRET_FILE_VARIABLE)))
    cached = _cached_secrets
    if cached is None or cached.source != source:
        values = [*source[:-1], *_file_secrets(source[-1])]
        cached = _cached_secrets = KnownSecrets(source, frozenset(_secret_values(values)))
    return cached


def _secret_sources(environ: Mapping[str, str]) -> list[str | None]:
    """The secret variables' values, and the secrets in the credentials file one of them names."""
    return [*(environ.get(name) for name in SECRET_VALUE_VARIABLES), *_file_secrets(environ.get(SECRET_FILE_VARIABLE))]


def _file_secrets(path: str | None) -> list[str]:
    """The secret fields of a Google credentials file; each line of a PEM key too, so the key
    is found both as the file holds it (JSON, escaped newlines) and as printed."""
    if not path:
        return []
    try:
        with open(path, "rb") as handle:
            data = json.loads(handle.read(_MAX_SECRET_FILE_BYTES))
    except (OSError, ValueError):
        return []
    if not isinstance(data, dict):
        return []
    found: list[str] = []
    for key in _SECRET_FILE_KEYS:
        value = data.get(key)
        if isinstance(value, str):
            found.append(value)
            found += [line for line in value.splitlines() if line.strip() and not line.startswith("-----")]
    return found


def with_extra(known: KnownSecrets, secrets: Iterable[str] | None) -> KnownSecrets:
    """`known` and the plausible secrets among `secrets` (the caller's own, e.g. from the config)."""
    if secrets is None:
        return known
    extra = {s for s in secrets if isinstance(s, str) and len(s) >= MIN_SECRET_LENGTH}
    if extra <= known.values:
        return known
    return KnownSecrets(known.source, known.values | extra)


def _secret_values(raw: Iterable[str | None]) -> set[str]:
    values = {(value or "").strip() for value in raw}
    return {value for value in values if len(value) >= MIN_SECRET_LENGTH}


@functools.lru_cache(maxsize=32)
def _pattern_for(values: frozenset[str]) -> re.Pattern[str]:
    # Longest first, so a secret that contains another is replaced whole.
    literals = [re.escape(v) for v in sorted(values, key=len, reverse=True)]
    return re.compile("|".join([*literals, KEY_SHAPE.pattern]))
