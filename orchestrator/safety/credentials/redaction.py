"""Credentials out of everything we write or print.

`redact()` / `redact_value()` replace the API key (and anything shaped like one) with
`[REDACTED]` in text and in JSON-like values before they reach a file, a log or a screen.
`redact_piece()` does the same for a piece cut out of a longer text, and also hides a
fragment of a known secret that the cut left at either end (a key cut in two is no longer
the key, so whole-value matching alone would let most of it through). Text is redacted
before it is cut wherever the whole text is at hand (`orchestrator.tools.truncation`).
Which values are secret, `orchestrator.safety.credentials.secrets` says.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from orchestrator.safety.credentials.secrets import KnownSecrets, own_secrets, with_extra

REDACTED = "[REDACTED]"
_KEY_PREFIX = "sk-ant-"
# An Anthropic-shaped key whose end a cut removed: whatever is left of it, at a cut.
_CUT_KEY_AT_END = re.compile(r"sk-ant-[A-Za-z0-9_-]*$")

# A fragment of a known secret left at a cut is redacted from this length on: shorter runs
# could be ordinary text, and fifteen characters of a key do not give the key away.
MIN_FRAGMENT_LENGTH = 16


def redact(text: str, secrets: Iterable[str] | None = None) -> str:
    """`text` with every known secret value and every Anthropic-shaped key replaced by `[REDACTED]`.

    The known values are those of `known_secret_values()` plus `secrets`.
    """
    return _redact(text, with_extra(own_secrets(), secrets))


def redact_piece(
    text: str, *, starts_at_cut: bool = False, ends_at_cut: bool = False, secrets: Iterable[str] | None = None
) -> str:
    """`redact(text)` for a piece cut out of a longer text, fragments of secrets at the cuts included.

    `starts_at_cut` / `ends_at_cut` say that the text before / after the piece was dropped.
    At such an end, the longest run of characters (`MIN_FRAGMENT_LENGTH` or more) that occurs
    inside a known secret value is replaced too, and so is an Anthropic-shaped key cut short.
    """
    known = with_extra(own_secrets(), secrets)
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
    return _redact_value(value, with_extra(own_secrets(), secrets))


def _redact_value(value: Any, known: KnownSecrets) -> Any:
    if isinstance(value, str):
        return _redact(value, known)
    if isinstance(value, dict):
        return {_redact_value(k, known): _redact_value(v, known) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_value(item, known) for item in value]
    if isinstance(value, tuple):
        return tuple(_redact_value(item, known) for item in value)
    return value


def _redact(text: str, known: KnownSecrets) -> str:
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
