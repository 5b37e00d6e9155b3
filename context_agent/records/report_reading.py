"""Reading the agent's `report_feature` payload leniently: the model writes it, so lists may
arrive as one string, items as objects, and fields may be missing."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# Keys an item object may carry its text under, in order of preference.
_ITEM_TEXT_KEYS = ("text", "decision", "description", "constraint", "summary")


@dataclass(frozen=True)
class AgentReport:
    """The parts of a `report_feature` call the Context Agent keeps."""

    summary: str = ""
    decisions: list[str] = field(default_factory=list)
    constraints: list[str] = field(default_factory=list)
    notes: str = ""


def parse_report(report: Any) -> AgentReport:
    """An `AgentReport` from whatever the agent sent; anything unusable reads as empty."""
    if not isinstance(report, Mapping):
        return AgentReport()
    return AgentReport(
        summary=_text(report.get("summary")),
        decisions=_items(report.get("decisions")),
        constraints=_items(report.get("constraints")),
        notes=_text(report.get("notes")),
    )


def _items(value: Any) -> list[str]:
    if isinstance(value, (str, Mapping)):
        value = [value]
    if not isinstance(value, list):
        return []
    items = [_item_text(item) for item in value]
    return [item for item in items if item]


def _item_text(item: Any) -> str:
    if isinstance(item, Mapping):
        for key in _ITEM_TEXT_KEYS:
            value = item.get(key)
            if isinstance(value, str):
                return value.strip()
        return ""
    return _text(item)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list):
        return "; ".join(str(part).strip() for part in value if str(part).strip())
    return ""
