"""The deterministic summary used when the summarizer is down, its answer is invalid, or its
summary does not fit: the previous summary, then one line per feature since, from the logs.

The new lines take priority (newest kept, up to `_NEW_LINES_BUDGET`); the previous summary
keeps its head, since a summary puts the most important first, and loses lines from its end.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from context_agent.budget import SUMMARY_BUDGET
from context_agent.records.failure_text import describe_check_failure
from context_agent.records.logs import FeatureOutcome
from context_agent.text import clip_item, fit_lines, fit_lines_from_end
from shared_base.tokens import estimate_tokens

HEADING = "Features since the previous summary:"
_LINE_TOKENS = 70
_NEW_LINES_BUDGET = 900


def fallback_summary(
    previous: str, outcomes: Sequence[FeatureOutcome], notes: Mapping[str, str],
    budget: int = SUMMARY_BUDGET,
) -> str:
    """The previous summary plus a line per outcome, within `budget` tokens. `notes` are report
    summaries recorded at once, used when a feature's log has none."""
    lines = [outcome_line(outcome, notes.get(outcome.id, "")) for outcome in outcomes]
    kept = fit_lines_from_end([line for line in lines if line], min(_NEW_LINES_BUDGET, budget))
    block = "\n".join([HEADING, *kept]) if kept else ""
    room = budget - estimate_tokens(block) - (1 if block else 0)
    head = fit_lines(previous.strip(), room) if room > 0 and previous.strip() else ""
    return "\n\n".join(part for part in (head, block) if part)


def outcome_line(outcome: FeatureOutcome, note: str = "") -> str:
    """"- id (name): status after N attempts. What the agent reported. [Last check: ...]"."""
    named = outcome.name and outcome.name != outcome.id
    label = f"{outcome.id} ({outcome.name})" if named else outcome.id
    attempts = f" after {outcome.attempts} attempts" if outcome.attempts > 1 else ""
    status = "status unknown (no usable log)" if outcome.status == "unknown" else outcome.status
    parts = [f"- {label}: {status}{attempts}."]
    said = outcome.report.summary or note
    if said:
        parts.append(said if said.endswith((".", "!", "?")) else f"{said}.")
    if outcome.status != "passed" and outcome.verification.known_failed:
        parts.append(f"Last check: {describe_check_failure(outcome.verification)}")
    return clip_item(" ".join(parts), _LINE_TOKENS)
