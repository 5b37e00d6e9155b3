"""Reading a spec's bytes as JSON, defensively, and warning about keys nobody reads.

Any bytes at all may arrive here (a wrong file, a binary, a crafted input): every failure
becomes a `SpecError` that says what is wrong and where, never a traceback.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Collection
from typing import Any

from orchestrator.spec.fields import MAX_SPEC_BYTES
from orchestrator.spec.spec_errors import SpecError, location
from orchestrator.user_errors import OrchestrateError

# Keys people write out of habit, and what they most likely meant.
_KEY_HINTS = {
    "steps": "acceptance", "criteria": "acceptance", "title": "name", "deps": "depends_on",
    "dependencies": "depends_on", "requires": "depends_on", "check": "verify",
    "test": "verify", "command": "verify", "attempts": "max_attempts",
}


class JsonObject(dict[str, Any]):
    """A decoded JSON object that remembers the keys given more than once.

    Its values are whatever the file holds (free-form until the models validate them).
    """

    duplicates: list[str]


def _object_pairs(pairs: list[tuple[str, Any]]) -> JsonObject:
    obj = JsonObject(pairs)
    seen: set[str] = set()
    obj.duplicates = []
    for key, _ in pairs:
        if key in seen:
            obj.duplicates.append(key)
        seen.add(key)
    return obj


class _NotJson(OrchestrateError):
    pass


def _reject_constant(name: str) -> Any:
    # Python's json reads NaN and Infinity; other JSON tools do not, so neither do we.
    raise _NotJson(f"{name} is not a JSON value (JSON numbers cannot be NaN or Infinity)")


def decode_json(raw: bytes, source: str) -> Any:
    """The JSON value in `raw`, or a SpecError saying exactly why there is none."""
    if len(raw) > MAX_SPEC_BYTES:
        raise SpecError(
            [f"the file is larger than the limit of {MAX_SPEC_BYTES // (1024 * 1024)} MB"
             " (a feature spec is normally a few kilobytes; is this the right file?)"],
            source=source,
        )
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise SpecError(["the file is UTF-16, not UTF-8 (save it as UTF-8)"], source=source)
    try:
        # utf-8-sig: a byte-order mark, as some Windows editors write, is tolerated.
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        byte = raw[exc.start : exc.start + 1].hex()
        raise SpecError(
            [f"byte {exc.start}: not UTF-8 ({exc.reason}, 0x{byte}); save the file as UTF-8"],
            source=source,
        ) from None
    if not text.strip():
        problem = 'the file is empty (a spec is a JSON object with a "features" list)'
        raise SpecError([problem], source=source)
    try:
        return json.loads(text, object_pairs_hook=_object_pairs, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        problem = f"line {exc.lineno}, column {exc.colno}: not valid JSON: {exc.msg}"
    except RecursionError:
        # The C decoder recurses once per nesting level: "[[[[...". A spec needs four.
        problem = "the JSON is nested too deeply (a spec needs only a few levels)"
    except _NotJson as exc:
        problem = f"not valid JSON: {exc}"
    except ValueError:
        # The only other ValueError: Python refuses integers of more than 4300 digits.
        problem = "not valid JSON: a number has too many digits"
    raise SpecError([problem], source=source)


def unknown_keys(
    obj: Any, known: Collection[str], prefix: str, *, suggest: bool = True
) -> list[str]:
    """Warnings for the keys of `obj` that the format does not define, or that repeat.

    `suggest=False` skips the fuzzy "did you mean" match, for when the warnings will be
    cut anyway and a crafted file could hold a million unknown keys.
    """
    if not isinstance(obj, dict):
        return []
    warnings: list[str] = []
    for key in obj:
        if key in known:
            continue
        guess = _KEY_HINTS.get(key)
        if guess is None and suggest and len(warnings) < 100:
            guess = next(iter(difflib.get_close_matches(key, list(known), n=1)), None)
        hint = f'; did you mean "{guess}"?' if guess in known else ""
        warnings.append(f"{location(prefix, [key])}: unknown key (ignored{hint})")
    for key in getattr(obj, "duplicates", []):
        where = location(prefix, [key])
        warnings.append(f"{where}: key given more than once (the last one is used)")
    return warnings
