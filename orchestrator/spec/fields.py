"""Field types and limits shared by the two spec formats (native and quickstart).

Each type carries its own check, so a bad value is reported by pydantic at its exact
location, beside every other problem in the file.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field
from pydantic_core import PydanticCustomError

MAX_SPEC_BYTES = 10 * 1024 * 1024
MAX_FEATURES = 100_000
MAX_ID_LENGTH = 100
MAX_COMMAND_LENGTH = 10_000
# A name is a commit's subject (`orchestrate: <id>: <name>`): one line, short enough to read there.
MAX_NAME_LENGTH = 200
MAX_ATTEMPTS_LIMIT = 100
DEFAULT_MAX_ATTEMPTS = 3

# Ids become file names (`.autonomous/logs/<id>.json`), so only characters that are safe
# on every file system and in a shell word; `.` and `..` are excluded separately.
_ID_RE = re.compile(r"[A-Za-z0-9._-]+")


def _problem(reason: str) -> PydanticCustomError:
    # "{reason}" keeps our text verbatim: pydantic formats the template with the context.
    return PydanticCustomError("spec_value", "{reason}", {"reason": reason})


def is_safe_id(value: str) -> bool:
    """True when `value` can be used as a feature id, and so as a file name."""
    return (
        0 < len(value) <= MAX_ID_LENGTH
        and _ID_RE.fullmatch(value) is not None
        and value not in (".", "..")
    )


def _unicode(value: str) -> str:
    # json accepts "\ud800"; such a string cannot be written back as UTF-8 (logs, state),
    # so it is refused here rather than crashing a write halfway through a run.
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        reason = "contains a lone surrogate escape such as \\ud800 (not valid Unicode)"
        raise _problem(reason) from None
    return value


def _non_blank(value: str) -> str:
    _unicode(value)
    if not value.strip():
        raise _problem("must not be empty")
    return value


def _feature_id(value: str) -> str:
    _unicode(value)
    if is_safe_id(value):
        return value
    hint = 'ids are used as file names: use only letters, digits, ".", "_" and "-"'
    if not value:
        raise _problem("must not be empty")
    if len(value) > MAX_ID_LENGTH:
        raise _problem(f"is {len(value)} characters long; the limit is {MAX_ID_LENGTH}")
    if value in (".", ".."):
        raise _problem(f'"{value}" is not allowed ({hint})')
    if "/" in value or "\\" in value:
        raise _problem(f"contains a path separator ({hint})")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise _problem(f"contains a control character ({hint})")
    bad = next(ch for ch in value if not _ID_RE.fullmatch(ch))
    shown = bad if bad.isprintable() else f"U+{ord(bad):04X}"
    raise _problem(f'contains "{shown}" ({hint})')


def _name(value: str) -> str:
    _non_blank(value)
    if len(value) > MAX_NAME_LENGTH:
        raise _problem(
            f"is {len(value)} characters long; the limit is {MAX_NAME_LENGTH} (a name is a commit's subject: "
            "put the detail in the description)"
        )
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise _problem("contains a line break or another control character (a name is one line of a commit message)")
    return value


CommandFault = Literal["blank", "nul", "too_long"]


def command_fault(command: str, limit: int) -> CommandFault | None:
    """What makes `command` no shell command to run, or None: the one check behind a spec's
    verify command and the agent's bash tool (each words the message for its own reader)."""
    if not command.strip():
        return "blank"
    if "\x00" in command:
        return "nul"
    if len(command) > limit:
        return "too_long"
    return None


def _command(value: str) -> str:
    _unicode(value)
    fault = command_fault(value, MAX_COMMAND_LENGTH)
    if fault == "blank":
        raise _problem("must not be empty")
    if fault == "nul":
        raise _problem("contains a NUL byte (a shell command cannot)")
    if fault == "too_long":
        raise _problem(
            f"is {len(value)} characters long; the limit is {MAX_COMMAND_LENGTH}"
            " (put a long check in a script and call the script)"
        )
    return value


def _glob(value: str) -> str:
    _non_blank(value)
    if "\x00" in value:
        raise _problem("contains a NUL byte (a file pattern cannot)")
    return value


Text = Annotated[str, AfterValidator(_unicode)]
"""Any string (may be empty), as long as it is valid Unicode."""

Label = Annotated[str, AfterValidator(_non_blank)]
"""A required, non-blank string: names, descriptions, categories."""

Name = Annotated[str, AfterValidator(_name)]
"""A feature's name: non-blank, one line, bounded (it becomes a commit's subject)."""

FeatureId = Annotated[str, AfterValidator(_feature_id)]
"""A feature id: safe to use as a file name."""

Command = Annotated[str, AfterValidator(_command)]
"""A shell command: non-blank, no NUL byte, bounded length."""

Glob = Annotated[str, AfterValidator(_glob)]
"""A file pattern relative to the project directory."""

Attempts = Annotated[int, Field(ge=1, le=MAX_ATTEMPTS_LIMIT)]
"""How many times a feature may be tried."""
