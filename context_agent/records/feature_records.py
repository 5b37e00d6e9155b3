"""What the Context Agent is told about features, as typed records.

The orchestrator owns the feature logs; it hands the agent a `read_feature` function that
builds a `FeatureRecord` from its log (None when there is no log; an exception, whose text is
kept, when the log cannot be used). A check's result reaches the agent as the program's one
`CheckResult` (`check_result`), read leniently.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from context_agent.records.report_reading import AgentReport, parse_report
from shared_base.check_result import CheckResult


class _Record(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True)


class FeatureRecord(_Record):
    """One feature as its log records it: what the summarizer and the fallback summary read."""

    id: str
    name: str = ""
    category: str = ""
    status: str = "unknown"
    attempts: int = 0
    verification: CheckResult = Field(default_factory=CheckResult)
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
            verification=CheckResult.from_mapping(_mapping(log.get("verification"))),
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
