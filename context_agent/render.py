"""The `## Project Context` prompt section (product spec, section 6). The one place that
knows its wording."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .text import one_line

HEADING = "## Project Context"


def render_project_context(injection: Mapping[str, Any]) -> str:
    """The section for an injection from `get_injection`; "" when its `tokenCount` is 0.

    Blocks are separated by one blank line and each is left out when empty; there is no
    trailing newline. When constraints had to be left out for budget, one extra line under
    Active Constraints says how many.
    """
    if not injection.get("tokenCount"):
        return ""
    return render_sections(injection)


def render_sections(injection: Mapping[str, Any]) -> str:
    """The section text regardless of `tokenCount` (used while the injection is measured)."""
    blocks = [HEADING]
    summary = str(injection.get("summary") or "").strip()
    if summary:
        blocks.append(f"**Summary:**\n{summary}")
    decisions = [
        decision_line(_text(item, "text"), _text(item, "featureId")) for item in _items(injection, "decisions")
    ]
    if decisions:
        blocks.append("**Key Decisions:**\n" + "\n".join(decisions))
    failures = [
        failure_line(_text(item, "description"), _text(item, "prevention")) for item in _items(injection, "failures")
    ]
    if failures:
        blocks.append("**Recent Failures to Avoid:**\n" + "\n".join(failures))
    constraints = [
        constraint_line(_text(item, "description")) for item in _items(injection, "constraints")
    ]
    omitted = injection.get("omittedConstraints") or 0
    if isinstance(omitted, int) and omitted > 0:
        constraints.append(omitted_constraints_line(omitted))
    if constraints:
        blocks.append("**Active Constraints:**\n" + "\n".join(constraints))
    if len(blocks) == 1:
        return ""
    return "\n\n".join(blocks)


def decision_line(text: str, feature_id: str) -> str:
    """One line under Key Decisions."""
    return f"- {one_line(text)} (Feature {feature_id})"


def failure_line(description: str, prevention: str) -> str:
    """One line under Recent Failures to Avoid."""
    return f"- {one_line(description)}: {one_line(prevention)}"


def constraint_line(description: str) -> str:
    """One line under Active Constraints."""
    return f"- {one_line(description)}"


def omitted_constraints_line(count: int) -> str:
    """The line that says how many active constraints did not fit."""
    noun = "constraint" if count == 1 else "constraints"
    return f"- ({count} more active {noun} not shown: less relevant to this feature)"


def _items(injection: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    value = injection.get(key) or []
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def _text(item: Mapping[str, Any], key: str) -> str:
    value = item.get(key)
    return "" if value is None else str(value)
