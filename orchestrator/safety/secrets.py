"""Keeping credentials away from the agent and out of everything we write or print.

Two jobs here:

- `scrubbed_environment()` builds the environment for processes the agent controls (its bash
  commands) and for the feature checks: no `ANTHROPIC_*` variable, nothing whose name looks
  like a credential, nothing whose value looks like an Anthropic key.
- `redact()` / `redact_value()` replace the API key (and anything shaped like one) with
  `[REDACTED]` in text and in JSON-like values before they reach a file, a log or a screen.
  `redact_piece()` does the same for a piece cut out of a longer text, and also hides a
  fragment of a known secret that the cut left at either end (a key cut in two is no longer
  the key, so whole-value matching alone would let most of it through). Text is redacted
  before it is cut wherever the whole text is at hand (`orchestrator.tools.truncation`).

A third job, hiding the key from the orchestrator's own `/proc/<pid>/environ`, is in
`orchestrator.safety.own_environ` (`hide_own_secrets`).

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
from typing import Any

REDACTED = "[REDACTED]"

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
_KEY_PREFIX = "sk-ant-"

# An Anthropic-shaped key whose end a cut removed: whatever is left of it, at a cut.
_CUT_KEY_AT_END = re.compile(r"sk-ant-[A-Za-z0-9_-]*$")

# Shorter values are not plausible credentials and redacting them would mangle ordinary text.
MIN_SECRET_LENGTH = 8
# A fragment of a known secret left at a cut is redacted from this length on: shorter runs
# could be ordinary text, and fifteen characters of a key do not give the key away.
MIN_FRAGMENT_LENGTH = 16


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
        return sorted(_known_secrets().values)
    return sorted(_secret_values(_secret_sources(environ)))


def redact(text: str, secrets: Iterable[str] | None = None) -> str:
    """`text` with every known secret value and every Anthropic-shaped key replaced by `[REDACTED]`.

    The known values are those of `known_secret_values()` plus `secrets`.
    """
    return _redact(text, _with_extra(_known_secrets(), secrets))


def redact_piece(
    text: str, *, starts_at_cut: bool = False, ends_at_cut: bool = False, secrets: Iterable[str] | None = None
) -> str:
    """`redact(text)` for a piece cut out of a longer text, fragments of secrets at the cuts included.

    `starts_at_cut` / `ends_at_cut` say that the text before / after the piece was dropped.
    At such an end, the longest run of characters (`MIN_FRAGMENT_LENGTH` or more) that occurs
    inside a known secret value is replaced too, and so is an Anthropic-shaped key cut short.
    """
    known = _with_extra(_known_secrets(), secrets)
    text = _redact(text, known)
    if starts_at_cut and text:
        length = max((_leading_fragment(text, value) for value in known.values), default=0)
        if length:
            text = REDACTED + text[length:]
    if ends_at_cut and text:
        length = max((_trailing_fragment(text, value) for value in known.values), default=0)
        shaped = _CUT_KEY_AT_END.search(text)
        length = max(length, len(shaped.group()) if shaped else 0)
        if length:
            text = text[: len(text) - length] + REDACTED
    return text


def redact_value(value: Any, secrets: Iterable[str] | None = None) -> Any:
    """`value` with `redact()` applied to every string in it (dict keys and values, lists, tuples)."""
    # The known values are looked up once for the whole value, not once per string in it.
    return _redact_value(value, _with_extra(_known_secrets(), secrets))


def _redact_value(value: Any, known: _KnownSecrets) -> Any:
    if isinstance(value, str):
        return _redact(value, known)
    if isinstance(value, dict):
        return {_redact_value(k, known): _redact_value(v, known) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_value(item, known) for item in value]
    if isinstance(value, tuple):
        return tuple(_redact_value(item, known) for item in value)
    return value


def _redact(text: str, known: _KnownSecrets) -> str:
    if not text:
        return text
    # Fast path: substring tests are far cheaper than the regex on large texts (state, logs).
    if _KEY_PREFIX in text:
        return known.pattern.sub(REDACTED, text)
    for value in known.values:
        if value in text:
            return known.pattern.sub(REDACTED, text)
    return text


def _leading_fragment(text: str, value: str) -> int:
    """Length of the longest start of `text` found inside `value`, if at least `MIN_FRAGMENT_LENGTH`."""
    if len(text) < MIN_FRAGMENT_LENGTH or text[:MIN_FRAGMENT_LENGTH] not in value:
        return 0
    length = MIN_FRAGMENT_LENGTH
    while length < len(text) and text[: length + 1] in value:
        length += 1
    return length


def _trailing_fragment(text: str, value: str) -> int:
    """Length of the longest end of `text` found inside `value`, if at least `MIN_FRAGMENT_LENGTH`."""
    if len(text) < MIN_FRAGMENT_LENGTH or text[-MIN_FRAGMENT_LENGTH:] not in value:
        return 0
    length = MIN_FRAGMENT_LENGTH
    while length < len(text) and text[-(length + 1):] in value:
        length += 1
    return length


class _KnownSecrets:
    """The secret values to redact and the one pattern that finds them (and key-shaped text)."""

    __slots__ = ("pattern", "source", "values")

    def __init__(self, source: tuple[str | None, ...], values: frozenset[str]) -> None:
        self.source = source
        self.values = values
        self.pattern = _pattern_for(values)


_cached_secrets: _KnownSecrets | None = None


def _known_secrets() -> _KnownSecrets:
    """The secrets of our own environment, rebuilt only when one of their variables changed.

    `redact` runs for every event, log line and state write; looking up two variables is
    all it costs while they stay the same.
    """
    global _cached_secrets
    source = tuple(map(os.environ.get, (*SECRET_VALUE_VARIABLES, SECRET_FILE_VARIABLE)))
    cached = _cached_secrets
    if cached is None or cached.source != source:
        values = [*source[:-1], *_file_secrets(source[-1])]
        cached = _cached_secrets = _KnownSecrets(source, frozenset(_secret_values(values)))
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


def _with_extra(known: _KnownSecrets, secrets: Iterable[str] | None) -> _KnownSecrets:
    if secrets is None:
        return known
    extra = {s for s in secrets if isinstance(s, str) and len(s) >= MIN_SECRET_LENGTH}
    if extra <= known.values:
        return known
    return _KnownSecrets(known.source, known.values | extra)


def _secret_values(raw: Iterable[str | None]) -> set[str]:
    values = {(value or "").strip() for value in raw}
    return {value for value in values if len(value) >= MIN_SECRET_LENGTH}


@functools.lru_cache(maxsize=32)
def _pattern_for(values: frozenset[str]) -> re.Pattern[str]:
    # Longest first, so a secret that contains another is replaced whole.
    literals = [re.escape(v) for v in sorted(values, key=len, reverse=True)]
    return re.compile("|".join([*literals, KEY_SHAPE.pattern]))
