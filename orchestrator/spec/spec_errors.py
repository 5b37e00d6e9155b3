"""`SpecError` and the translation of pydantic's errors into plain, located messages."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from orchestrator.user_errors import OrchestrateError

# A spec with thousands of broken features should still print a readable error.
MAX_SHOWN_PROBLEMS = 200

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class SpecError(OrchestrateError):
    """A spec file that cannot be used. `problems` lists every problem, each located."""

    def __init__(
        self,
        problems: Sequence[str],
        *,
        source: str = "<spec>",
        warnings: Sequence[str] = (),
    ) -> None:
        self.problems: list[str] = list(problems)
        self.source = source
        self.warnings: list[str] = list(warnings)
        super().__init__(self.problems)

    def __str__(self) -> str:
        count = len(self.problems)
        noun = "problem" if count == 1 else "problems"
        lines = [f"{self.source} is not a valid feature spec ({count} {noun}):"]
        lines += [f"  {problem}" for problem in self.problems[:MAX_SHOWN_PROBLEMS]]
        if count > MAX_SHOWN_PROBLEMS:
            lines.append(f"  ... and {count - MAX_SHOWN_PROBLEMS} more")
        return "\n".join(lines)


class SpecFileMissing(SpecError):
    """The spec's path names no file: nothing to validate, so no "not a valid feature spec"."""

    def __init__(self, source: str) -> None:
        super().__init__(["no such file"], source=source)

    def __str__(self) -> str:
        return f"{self.source}: the spec file does not exist (check the path; `orchestrate plan` writes a spec)"


def quote(text: str, limit: int = 60) -> str:
    """`text` in double quotes, shortened, with control characters escaped.

    Spec text ends up on the user's terminal; escaping keeps a crafted id from moving the
    cursor or changing colours.
    """
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return json.dumps(text, ensure_ascii=True)


def describe(value: Any) -> str:
    """How a JSON value reads in a message: 'a list', 'the number 5', 'null'."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        digits = repr(value)
        return f"the number {digits if len(digits) <= 20 else digits[:17] + '...'}"
    if isinstance(value, str):
        return f"the string {quote(value, 30)}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def location(prefix: str, parts: Sequence[str | int]) -> str:
    """Join a location as users read it: `features[3]`, ("acceptance", 0) -> `...acceptance[0]`."""
    text = prefix
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        elif _PLAIN_KEY.fullmatch(part):
            text += f".{part}" if text else part
        else:
            text += f"[{quote(part)}]"
    return text


def located(where: str, message: str) -> str:
    """One problem line: 'where: message', or just the message for the whole file."""
    return f"{where}: {message}" if where else message


_TYPE_WORDS = {
    "string_type": "must be a string",
    "int_type": "must be a whole number",
    "bool_type": "must be true or false",
    "list_type": "must be a list",
    "model_type": "must be an object",
    "dict_type": "must be an object",
}


def translate(error: ValidationError, prefix: str = "") -> list[str]:
    """Each pydantic error as one plain-words problem, located under `prefix`."""
    problems = []
    for item in error.errors(include_url=False):
        kind = item["type"]
        ctx = item.get("ctx") or {}
        if kind == "missing":
            message = "required field is missing"
        elif kind in _TYPE_WORDS:
            message = f"{_TYPE_WORDS[kind]}, got {describe(item['input'])}"
        elif kind == "greater_than_equal":
            message = f"must be at least {ctx.get('ge')}, got {describe(item['input'])}"
        elif kind == "less_than_equal":
            message = f"must be at most {ctx.get('le')}, got {describe(item['input'])}"
        elif kind == "spec_value":
            message = str(ctx.get("reason", item["msg"]))
        else:
            message = item["msg"]
        parts = [part for part in item["loc"] if isinstance(part, (str, int))]
        problems.append(located(location(prefix, parts), message))
    return problems
