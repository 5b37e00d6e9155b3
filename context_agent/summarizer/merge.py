"""Merging a summarizer answer into the stores as a delta, so nothing is lost by rewriting.

- Stored decisions and constraints stay unless the answer retires them by id. Retirements are
  applied before additions, so a consolidated constraint replacing several is not mistaken
  for a restatement of one it replaces.
- An item that says it `restates` a stored id renews that item (recency, and its wording only
  when it `replaces` it); one naming an id that is not stored is taken as new, with a warning.
- New decisions count only for the features being summarized: the agent's reports already
  recorded theirs, and a decision credited to an older feature is the model restating (or
  resurrecting an evicted) old one. Restatements in other words are recognised and dropped.
- A "new" failure for a feature that already has entries is read as a better prevention for
  them; otherwise it is added. Preventions replace only defaults, never what the agent learned.
- The new summary replaces the old one only if it is non-empty and fits `SUMMARY_BUDGET`;
  otherwise the caller keeps the old one and appends the deterministic lines (fallback.py).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field

from context_agent.budget import FAILURE_DESCRIPTION_TOKENS, PREVENTION_TOKENS, SUMMARY_BUDGET
from context_agent.memory.store_updates import (
    add_constraint,
    add_decision,
    add_failure,
    renew,
    retire_constraints,
    retire_decisions,
)
from context_agent.memory.stores import ActiveConstraints, ContextStores, KeyDecisions
from context_agent.summarizer.summarizer_call import ConstraintDraft, DecisionDraft, SummarizerAnswer
from context_agent.text import clip_item
from shared_base.tokens import estimate_tokens


@dataclass
class MemoryMergeOutcome:
    """What one merge changed."""

    new_decisions: int = 0
    retired_decisions: int = 0
    new_constraints: int = 0
    retired_constraints: int = 0
    new_failures: int = 0
    retired_failures: int = 0
    preventions: int = 0
    renewed_decisions: int = 0
    renewed_constraints: int = 0
    unknown_restates: list[str] = field(default_factory=list)
    """Ids that items claimed to restate but that are not stored (those items were taken as new)."""


def merge_answer(
    stores: ContextStores, answer: SummarizerAnswer, batch_ids: Collection[str], *,
    category_of: Callable[[str], str], by: str, now: int,
) -> MemoryMergeOutcome:
    """Apply the answer's retirements and additions to `stores` (the summary is not touched)."""
    outcome = MemoryMergeOutcome()
    outcome.retired_decisions = retire_decisions(stores.decisions, answer.retired_decision_ids)
    retired = set(answer.retired_failure_ids)
    kept = [item for item in stores.failures.failures if item.id not in retired]
    outcome.retired_failures, stores.failures.failures = len(stores.failures.failures) - len(kept), kept
    outcome.retired_constraints = retire_constraints(
        stores.constraints, answer.retired_constraint_ids, by=by, now=now
    )
    for draft in answer.new_decisions:
        if _renewed(stores.decisions, draft, outcome):
            outcome.renewed_decisions += 1
        elif draft.feature_id in batch_ids and add_decision(
            stores.decisions, draft.text, draft.feature_id,
            category=category_of(draft.feature_id), source="summarizer", now=now,
        ):
            outcome.new_decisions += 1
    for constraint in answer.new_constraints:
        if _renewed(stores.constraints, constraint, outcome):
            outcome.renewed_constraints += 1
        elif add_constraint(
            stores.constraints, constraint.description, constraint.feature_id,
            category=category_of(constraint.feature_id), source="summarizer", now=now,
        ):
            outcome.new_constraints += 1
    for failure in answer.new_failures:
        if failure.feature_id not in batch_ids:
            continue
        if any(item.feature_id == failure.feature_id for item in stores.failures.failures):
            outcome.preventions += _improve_defaults(stores, failure.feature_id, failure.prevention)
        elif add_failure(
            stores.failures, failure.feature_id, attempt=0, command="", exit_code=None,
            description=clip_item(failure.description, FAILURE_DESCRIPTION_TOKENS),
            prevention=failure.prevention, prevention_source="summarizer", now=now,
        ):
            outcome.new_failures += 1
    for update in answer.preventions:
        outcome.preventions += _improve_defaults(
            stores, update.failure_id, update.prevention, by_id=True
        )
    return outcome


def _renewed(store: KeyDecisions | ActiveConstraints, draft: DecisionDraft | ConstraintDraft, outcome: MemoryMergeOutcome) -> bool:
    """Renew the stored item `draft` says it restates; False when it claims none, or an id not
    stored (noted in `outcome`, and the draft is then taken as new)."""
    if not draft.restates:
        return False
    items = store.decisions if isinstance(store, KeyDecisions) else store.constraints
    target = next((item for item in items if item.id == draft.restates), None)
    if target is None:
        outcome.unknown_restates.append(draft.restates)
        return False
    wording = draft.text if isinstance(draft, DecisionDraft) else draft.description
    renew(store, target, wording if draft.replaces else "")
    return True


def summary_rejection(summary: str) -> str | None:
    """Why the answer's summary may not replace the stored one, or None when it may."""
    if not summary.strip():
        return "the new summary is empty"
    tokens = estimate_tokens(summary)
    if tokens > SUMMARY_BUDGET:
        return f"the new summary is {tokens} tokens, over its {SUMMARY_BUDGET}-token budget"
    return None


def _improve_defaults(stores: ContextStores, key: str, prevention: str, *, by_id: bool = False) -> int:
    """Set `prevention` on the failures (of feature `key`, or with id `key`) that still carry
    the default one; returns how many changed."""
    prevention = clip_item(prevention, PREVENTION_TOKENS)
    if not prevention:
        return 0
    changed = 0
    for item in stores.failures.failures:
        if (item.id if by_id else item.feature_id) == key and item.prevention_source == "default":
            item.prevention, item.prevention_source = prevention, "summarizer"
            changed += 1
    return changed
