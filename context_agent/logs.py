"""What the summarizer reads from `.autonomous/logs/<id>.json` (format: product spec section 4,
step 7; its model lives in the orchestrator). Read leniently: a missing or damaged log costs
the summary some detail, never the summarization."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from orchestrator.store.feature_log import UnusableLog, read_feature_log
from orchestrator.store.paths import ProjectPaths

from .interfaces import FeatureLike
from .reports import AgentReport, parse_report

# Bounds on what one feature contributes to the summarizer's prompt, in characters.
_OUTPUT_TAIL_CHARS = 800
_TEXT_CHARS = 1200
_VERIFICATION_KEYS = ("command", "success", "exitCode", "skipped", "attempt")


@dataclass(frozen=True)
class FeatureOutcome:
    """One feature as the summarizer and the fallback summary see it."""

    id: str
    name: str = ""
    category: str = ""
    status: str = "unknown"
    attempts: int = 0
    verification: dict[str, Any] = field(default_factory=dict)
    report: AgentReport = field(default_factory=AgentReport)
    log_problem: str | None = None
    """Why the log could not be used, when it could not."""

    def for_prompt(self) -> dict[str, Any]:
        """A bounded, JSON-ready view for the summarizer's prompt. A passing check is left out:
        `status` says it all, and the summarizer is paid by the token."""
        data: dict[str, Any] = {
            "id": self.id, "name": self.name, "category": self.category,
            "status": self.status, "attempts": self.attempts,
        }
        passed = self.status == "passed" and self.verification.get("success") is True
        if self.verification and not passed:
            data["verification"] = self.verification
        report = self.report
        if report.summary or report.decisions or report.constraints or report.notes:
            data["report"] = {
                "summary": report.summary[:_TEXT_CHARS], "decisions": report.decisions[:10],
                "constraints": report.constraints[:10], "notes": report.notes[:_TEXT_CHARS],
            }
        if self.log_problem:
            data["logProblem"] = self.log_problem
        return data


def read_outcome(paths: ProjectPaths, feature_id: str, feature: FeatureLike | None) -> FeatureOutcome:
    """The outcome of `feature_id` from its log, falling back to the spec's name and category."""
    name = str(getattr(feature, "name", "") or "")
    category = str(getattr(feature, "category", "") or "")
    try:
        raw = read_feature_log(paths.feature_log(feature_id))  # bounded, and checked to be this feature's
    except FileNotFoundError:
        return FeatureOutcome(feature_id, name, category, log_problem="no log")
    except (OSError, UnusableLog) as exc:
        return FeatureOutcome(feature_id, name, category, log_problem=f"unreadable log: {exc}")
    return FeatureOutcome(
        id=feature_id,
        name=_str(raw.get("name")) or name,
        category=_str(raw.get("category")) or category,
        status=_str(raw.get("status")) or "unknown",
        attempts=_attempts(raw.get("attempts")),
        verification=_verification(raw.get("verification")),
        report=parse_report(raw.get("report")),
    )


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _attempts(value: Any) -> int:
    # A count, or a list of attempt records, depending on how the orchestrator logs it.
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value
    if isinstance(value, list):
        return len(value)
    return 0


def _verification(value: Any) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        return {}
    kept = {key: value[key] for key in _VERIFICATION_KEYS if key in value}
    for key in ("output", "error"):
        text = value.get(key)
        if isinstance(text, str) and text:
            kept[key] = text[-_OUTPUT_TAIL_CHARS:]
    return kept
