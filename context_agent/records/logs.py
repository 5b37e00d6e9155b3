"""What the summarizer knows of each feature: its record from the orchestrator's feature log
(`read_feature`), else the spec's name and category. Read leniently: a missing or damaged log
costs the summary some detail, never the summarization."""

from __future__ import annotations

from context_agent.interfaces import FeatureLike
from context_agent.records.feature_records import FeatureReader, FeatureRecord
from shared_base.json_values import JsonObject

# Bounds on what one feature contributes to the summarizer's prompt, in characters.
_TEXT_CHARS = 1200


class FeatureOutcome(FeatureRecord):
    """One feature as the summarizer and the fallback summary see it: its record, or what the
    spec says of it when the log could not be used, and why."""

    log_problem: str | None = None
    """Why the log could not be used, when it could not."""

    # JSON for the summarizer's prompt, reshaped by `summarizer._log_lines`.
    def for_prompt(self) -> JsonObject:
        """A bounded, JSON-ready view for the summarizer's prompt. A passing check is left out:
        `status` says it all, and the summarizer is paid by the token."""
        data: JsonObject = {
            "id": self.id, "name": self.name, "category": self.category,
            "status": self.status, "attempts": self.attempts,
        }
        check = self.verification.for_prompt()
        passed = self.status == "passed" and self.verification.success is True
        if check and not passed:
            data["verification"] = check
        report = self.report
        if report.summary or report.decisions or report.constraints or report.notes:
            data["report"] = {
                "summary": report.summary[:_TEXT_CHARS], "decisions": report.decisions[:10],
                "constraints": report.constraints[:10], "notes": report.notes[:_TEXT_CHARS],
            }
        if self.log_problem:
            data["logProblem"] = self.log_problem
        return data


def read_outcome(read_feature: FeatureReader | None, feature_id: str, feature: FeatureLike | None) -> FeatureOutcome:
    """The outcome of `feature_id` from its record, falling back to the spec's name and category."""
    name = str(getattr(feature, "name", "") or "")
    category = str(getattr(feature, "category", "") or "")
    try:
        record: FeatureRecord | None = read_feature(feature_id) if read_feature else None
    except FileNotFoundError:
        record = None
    except Exception as exc:  # the orchestrator's reader says why the log is unusable
        return FeatureOutcome(id=feature_id, name=name, category=category, log_problem=f"unreadable log: {exc}")
    if record is None:
        return FeatureOutcome(id=feature_id, name=name, category=category, log_problem="no log")
    return FeatureOutcome(
        id=feature_id,
        name=record.name or name,
        category=record.category or category,
        status=record.status,
        attempts=record.attempts,
        verification=record.verification,
        report=record.report,
    )
