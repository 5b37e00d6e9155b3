"""`CheckResult`: the one model of a check's outcome, for the whole program.

What a check run returns (`orchestrator.run.checks.running.check_command`), what the agent is fed back
(the spec's `Last Verification Result`), what the state, the feature logs, the `verification`
and `regression_check` events and the working-memory log save (each holds a `CheckResult`, none
redeclares its fields), and what the Context Agent reads of a feature's last check. It lives
at the bottom both packages import (the Context Agent imports nothing from `orchestrator`); a new field of a check's
result is a new field here, and nowhere else.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from pydantic.alias_generators import to_camel

from shared_base.json_values import JsonObject

# Bounds on the text a check contributes to the summarizer, in characters (the end of the output says the most).
OUTPUT_TAIL_CHARS = 800


class Influencer(BaseModel):
    """A file that can change a check's outcome without being the check, changed during the feature.

    Found by `orchestrator.run.checks.influence.check_influence`: a `conftest.py`, pytest's configuration, a site
    hook (`sitecustomize.py`, `*.pth`) or a module shadowing the standard library.
    """

    path: str
    """Relative to the project root."""
    kind: str
    """`conftest`, `pytest-config`, `site-hook` or `stdlib-shadow`."""
    change: str
    """`added`, `modified` or `removed`, since before the feature's first attempt in this run."""


class CheckResult(BaseModel):
    """The outcome of one check. Saved with camelCase keys, readable with either spelling."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    command: str | None = None
    """The shell command that was run; None when the feature has no check."""
    success: bool = False
    """True only when the command exited with status 0."""
    exit_code: int | None = None
    """The exit status; negative when killed by a signal, None when it never finished."""
    output: str = ""
    """The tail of the combined stdout and stderr, bounded in size."""
    error: str | None = None
    """Why the check did not pass, when the exit code alone does not say it."""
    skipped: bool = False
    """True when there was no check to run; the agent's report decides then."""
    attempt: int = 0
    """Which attempt at the feature this check verified (1-based)."""
    # Only when there are some, so the usual result keeps its seven keys.
    influencers: list[Influencer] = Field(default_factory=list, exclude_if=lambda found: not found)
    """Check-influencing files changed during the feature (`orchestrator.run.checks.influence.check_influence`)."""
    refused_by: str | None = Field(None, exclude_if=lambda by: by is None)
    """What refused the attempt before its check could decide (so there is no exit status): the
    protected-files guard, the ignore-rules guard, `--strict-checks`, the merge queue."""

    def dump(self) -> JsonObject:
        """A JSON object, keyed as saved (camelCase)."""
        return self.model_dump(mode="json", by_alias=True)

    def to_json(self) -> JsonObject:
        """The result with the camelCase keys of the spec's `Last Verification Result`."""
        return self.dump()

    @classmethod
    def from_mapping(cls, data: Mapping[str, object] | None, *, tail: int | None = OUTPUT_TAIL_CHARS) -> CheckResult:
        """A result read leniently (a feature log's, written by anyone): the fields of `data`
        (camelCase keys) that have the right type; the others are left unset, and so out of
        `for_prompt`. The output and error keep their last `tail` characters (all with None)."""
        if not isinstance(data, Mapping):
            return cls()
        kept: dict[str, object] = {}
        for name, field in cls.model_fields.items():
            key = field.alias or name
            if key not in data:
                continue
            value = data[key]
            if name in ("output", "error"):
                if isinstance(value, str) and value:
                    kept[name] = value[-tail:] if tail else value
            elif _fits(field.annotation, value):
                kept[name] = value
        return cls.model_validate(kept)

    def for_prompt(self) -> JsonObject:
        """The fields that were set, camelCase: what the summarizer is shown of the check (not
        the run's own bookkeeping: which files could sway it, what refused it), the output and
        the error last, where the summarizer reads on into the agent's report."""
        data = self.model_dump(mode="json", by_alias=True, exclude_unset=True, exclude={"influencers", "refused_by"})
        last = {key: data.pop(key) for key in ("output", "error") if key in data}
        return data | last

    @property
    def known_failed(self) -> bool:
        """Its success was given (or read) and is False: a result read from nothing has not failed."""
        return "success" in self.model_fields_set and not self.success


def _fits(annotation: Any, value: object) -> bool:
    """`value` is of the field's type as it stands (strict: no `"1"` for 1, no 1 for True)."""
    try:
        _adapter(annotation).validate_python(value, strict=True)
    except ValidationError:
        return False
    return True


@cache
def _adapter(annotation: Any) -> TypeAdapter[Any]:
    return TypeAdapter(annotation)
