"""What the Context Agent is told about features, as typed records.

The orchestrator owns the feature logs; it hands the agent a `read_feature` function that
builds a `FeatureRecord` from its log (None when there is no log; an exception, whose text is
kept, when the log cannot be used). A check's result reaches the agent as a `CheckSummary`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from context_agent.records.report_reading import AgentReport, parse_report

# Bounds on the text a check contributes, in characters (the end of the output says the most).
OUTPUT_TAIL_CHARS = 800


class _Record(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True)


class CheckSummary(_Record):
    """A feature check's result, as much of it as the agent uses. Fields left unset are
    left out of the summarizer's prompt."""

    command: str | None = None
    success: bool | None = None
    exit_code: int | None = None
    skipped: bool | None = None
    attempt: int | None = None
    output: str | None = None
    """The end of the check's output."""
    error: str | None = None

    @classmethod
    def from_mapping(cls, data: Mapping[str, object] | None, *, tail: int | None = OUTPUT_TAIL_CHARS) -> CheckSummary:
        """The fields of a check result (camelCase keys) that have the right type; the others
        are left unset. The output and error keep their last `tail` characters (all with None)."""
        if not isinstance(data, Mapping):
            return cls()
        kept: dict[str, object] = {}
        for name, field in cls.model_fields.items():
            value = data.get(field.alias or name)
            if name in ("output", "error"):
                if isinstance(value, str) and value:
                    kept[name] = value[-tail:] if tail else value
            elif (field.alias or name) in data and _fits(name, value):
                kept[name] = value
        return cls.model_validate(kept)

    def for_prompt(self) -> dict[str, object]:
        """The fields that were set, camelCase."""
        return self.model_dump(by_alias=True, exclude_unset=True)


def _fits(name: str, value: object) -> bool:
    if value is None:
        return True
    if name == "command":
        return isinstance(value, str)
    if name in ("success", "skipped"):
        return isinstance(value, bool)
    return isinstance(value, int) and not isinstance(value, bool)


class FeatureRecord(_Record):
    """One feature as its log records it: what the summarizer and the fallback summary read."""

    id: str
    name: str = ""
    category: str = ""
    status: str = "unknown"
    attempts: int = 0
    verification: CheckSummary = Field(default_factory=CheckSummary)
    """The last check's result."""
    report: AgentReport = Field(default_factory=AgentReport)
    """The agent's `report_feature` call, as `parse_report` reads it."""

    @classmethod
    def from_log(cls, feature_id: str, log: Mapping[str, object]) -> FeatureRecord:
        """A record from a feature log's JSON object, read leniently: a field of the wrong
        type reads as unknown."""
        return cls(
            id=feature_id,
            name=_str(log.get("name")),
            category=_str(log.get("category")),
            status=_str(log.get("status")) or "unknown",
            attempts=_attempts(log.get("attempts")),
            verification=CheckSummary.from_mapping(_mapping(log.get("verification"))),
            report=parse_report(log.get("report")),
        )


FeatureReader = Callable[[str], FeatureRecord | None]
"""Given a feature id: its record, None when it has no log; raises (any exception, its text
kept as the reason) when the log cannot be used."""


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _mapping(value: object) -> Mapping[str, object] | None:
    return value if isinstance(value, Mapping) else None


def _attempts(value: object) -> int:
    # A count, or a list of attempt records.
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value
    if isinstance(value, list):
        return len(value)
    return 0
