"""Choosing what goes into a feature's `## Project Context` under the hard token budget.

Order of work: the 3 most relevant decisions and the 2 most relevant failures, whole, then
constraints within their share, then the summary gets what is left (at most its share), then
more constraints if room remains. Items are chosen by relevance then recency and are always
whole (the section shares are what the summary leaves them, not caps that cut an item); the
summary is cut at a line or sentence boundary, and when the section is still over budget whole
items go, least relevant first. A last check of the rendered text makes the
2000-token limit hold whatever the estimator's rounding does.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TypeVar

from context_agent.budget import (
    CONSTRAINTS_BUDGET,
    INJECTION_BUDGET,
    MAX_DECISIONS_SHOWN,
    MAX_FAILURES_SHOWN,
    RECENT_NOTES_BUDGET,
    SUMMARY_BUDGET,
)
from context_agent.injection.context_injection import (
    ContextInjection,
    InjectedConstraint,
    InjectedDecision,
    InjectedFailure,
)
from context_agent.injection.relevance import ItemFacts, focus_on, rank
from context_agent.injection.render import constraint_line, decision_line, failure_line, render_sections
from context_agent.interfaces import FeatureLike
from context_agent.memory.stores import Constraint, ContextStores, Decision, Failure, RunningSummary
from context_agent.text import fit_lines, fit_lines_from_end
from shared_base.tokens import estimate_tokens

RECENT_HEADING = "Recent features:"


def _rendered_tokens(injection: ContextInjection) -> int:
    """Estimated tokens of the rendered section, whatever `token_count` says."""
    return estimate_tokens(render_sections(injection))


def build_injection(
    stores: ContextStores, feature_id: str, features: Mapping[str, FeatureLike], *, reserved_tokens: int = 0,
    files: Collection[str] = (),
) -> ContextInjection:
    """The injection for `feature_id` from the stores, within `INJECTION_BUDGET` less
    `reserved_tokens` (what the prompt carries beside it that counts against the same budget);
    `files`: what the feature is known to touch (its check's files, its footprint)."""
    budget = INJECTION_BUDGET - max(0, reserved_tokens)
    focus = focus_on(feature_id, features)
    decisions = rank(stores.decisions.decisions, focus, _decision_facts, features)
    shown = _worth_showing(stores.failures.failures, focus.feature_id, files)
    failures = rank(shown, focus, _failure_facts, features)
    constraints = rank(stores.constraints.constraints, focus, _constraint_facts, features)

    injection = ContextInjection(feature_id=feature_id)
    injection.decisions = [_as_decision(item) for item in decisions[:MAX_DECISIONS_SHOWN]]
    injection.failures = [_as_failure(item) for item in failures[:MAX_FAILURES_SHOWN]]
    chosen = _take(constraints, _constraint_line, CONSTRAINTS_BUDGET, None, _as_constraint)
    _set_constraints(injection, chosen, constraints)

    # The summary gets what the other sections leave, at most its own share. A one-token
    # stand-in measures the rest with the summary's heading; the summary then adds exactly its
    # own tokens, since pieces never join across the line breaks around it.
    injection.summary = "x"
    without_summary = _rendered_tokens(injection) - 1
    room = min(SUMMARY_BUDGET, budget - without_summary)
    injection.summary = summary_text(stores.summary, room)
    used = without_summary + estimate_tokens(injection.summary)

    _spill_constraints(injection, chosen, constraints, budget - used)
    tokens = _enforce_total(injection, constraints, budget)
    injection.token_count = tokens if _has_content(injection) else 0
    return injection


def _worth_showing(failures: Sequence[Failure], feature_id: str, files: Collection[str]) -> list[Failure]:
    """Leave out a feature's own latest failure (its retry prompt shows that check's result
    already) and failures since resolved, unless they share a file with this feature: what it is
    known to touch (`files`) or what its own failing attempts changed. Its dependencies alone do
    not count: a failure its dependency got past says nothing about files this one never meets."""
    own = [item for item in failures if item.feature_id == feature_id]
    latest = max(own, key=lambda item: item.seq) if own else None
    touched = {*files, *(path for item in own for path in item.files)}
    return [
        item for item in failures
        if item is not latest and (not item.resolved or not touched.isdisjoint(item.files))
    ]


def summary_text(store: RunningSummary, budget: int) -> str:
    """The stored summary plus the report summaries recorded since it was written (newest kept
    first, within their share), cut to `budget` tokens at line or sentence boundaries."""
    if budget <= 0:
        return ""
    notes = [f"- {note.feature_id}: {note.summary}" for note in store.recent]
    notes_budget = min(RECENT_NOTES_BUDGET, budget) - estimate_tokens(RECENT_HEADING)
    kept = fit_lines_from_end(notes, notes_budget) if notes_budget > 0 else []
    notes_block = "\n".join([RECENT_HEADING, *kept]) if kept else ""
    # +1: the blank line between the summary and the notes is one token.
    summary_budget = budget - estimate_tokens(notes_block) - (1 if notes_block else 0)
    summary = fit_lines(store.summary.strip(), summary_budget) if summary_budget > 0 else ""
    return "\n\n".join(part for part in (summary, notes_block) if part)


Item = TypeVar("Item")
Shown = TypeVar("Shown")


def _take(
    ranked: Sequence[Item], line: Callable[[Item], str], budget: int, limit: int | None,
    convert: Callable[[Item], Shown],
) -> list[Shown]:
    # Lines joined by single newlines add up exactly under the estimator, so per-line sums
    # are the section's cost. An item that does not fit is skipped; a shorter one may.
    chosen: list[Shown] = []
    used = 0
    for item in ranked:
        if limit is not None and len(chosen) >= limit:
            break
        cost = estimate_tokens(line(item))
        if used + cost <= budget:
            chosen.append(convert(item))
            used += cost
    return chosen


def _spill_constraints(
    injection: ContextInjection, chosen: list[InjectedConstraint], ranked: Sequence[Constraint],
    room: int,
) -> None:
    """Use the `room` the summary left unused for constraints that did not fit their share."""
    if len(chosen) == len(ranked):
        return
    # The "N more" line and the heading are already counted; the line only gets shorter.
    taken = {item.id for item in chosen}
    for constraint in ranked:
        if constraint.id in taken:
            continue
        cost = estimate_tokens(_constraint_line(constraint))
        if cost <= room:
            chosen.append(_as_constraint(constraint))
            taken.add(constraint.id)
            room -= cost
    _set_constraints(injection, chosen, ranked)


def _set_constraints(
    injection: ContextInjection, chosen: list[InjectedConstraint], ranked: Sequence[Constraint]
) -> None:
    # Shown in the order they were recorded, so the list reads the same from feature to
    # feature; relevance only decides which ones are shown when not all fit.
    order = {item.id: item.seq for item in ranked}
    injection.constraints = sorted(chosen, key=lambda item: order.get(item.id, 0))
    injection.omitted_constraints = len(ranked) - len(chosen)


def _enforce_total(injection: ContextInjection, ranked: Sequence[Constraint], budget: int) -> int:
    """Cut until the rendered section fits `budget`: summary tail first, then the least relevant
    items. Returns the section's tokens."""
    rank_of = {item.id: position for position, item in enumerate(ranked)}
    while (excess := (tokens := _rendered_tokens(injection)) - budget) > 0:
        if injection.summary:
            shorter = fit_lines(injection.summary, estimate_tokens(injection.summary) - excess)
            injection.summary = shorter if shorter != injection.summary else ""
        elif injection.constraints:
            worst = max(injection.constraints, key=lambda item: rank_of.get(item.id, 0))
            injection.constraints.remove(worst)
            injection.omitted_constraints += 1
        elif injection.failures:
            injection.failures.pop()
        elif injection.decisions:
            injection.decisions.pop()
        else:
            # Only the "N more constraints" line is left; it cannot be over 2000 tokens,
            # but never loop forever on a broken estimator.
            injection.omitted_constraints = 0
            return _rendered_tokens(injection)
    return tokens


def _has_content(injection: ContextInjection) -> bool:
    return bool(
        injection.summary or injection.decisions or injection.failures
        or injection.constraints or injection.omitted_constraints
    )


def _decision_facts(item: Decision) -> ItemFacts:
    return ItemFacts(item.feature_id, item.category, item.text, item.seq)


def _failure_facts(item: Failure) -> ItemFacts:
    return ItemFacts(item.feature_id, "", f"{item.description} {item.prevention}", item.seq)


def _constraint_facts(item: Constraint) -> ItemFacts:
    return ItemFacts(item.feature_id, item.category, item.description, item.seq)


def _decision_line(item: Decision) -> str:
    return decision_line(item.text, item.feature_id)


def _failure_line(item: Failure) -> str:
    return failure_line(item.description, item.prevention)


def _constraint_line(item: Constraint) -> str:
    return constraint_line(item.description)


def _as_decision(item: Decision) -> InjectedDecision:
    return InjectedDecision(id=item.id, text=item.text, feature_id=item.feature_id)


def _as_failure(item: Failure) -> InjectedFailure:
    return InjectedFailure(
        id=item.id, description=item.description, prevention=item.prevention, feature_id=item.feature_id
    )


def _as_constraint(item: Constraint) -> InjectedConstraint:
    return InjectedConstraint(id=item.id, description=item.description, feature_id=item.feature_id)
