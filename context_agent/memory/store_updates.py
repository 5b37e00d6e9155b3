"""Adding to and retiring from the stores, with their caps and eviction rules.

- Decisions: at most 20. At the cap the oldest goes (by `seq`, the order of recording; a
  decision restated by a later feature counts as recorded again). Recency is the rule because
  relevance depends on the feature at hand, which is chosen later, at injection time.
- Failures: at most 10, the most recent kept. The same failure seen again on a retry updates
  its entry instead of taking a second slot.
- Constraints: at most `MAX_ACTIVE_CONSTRAINTS` active. The summarizer retires them by id, and
  is asked to consolidate when they outgrow their share or near the limit. Past the limit,
  `enforce_constraint_limit` retires the surplus, and the caller reports each one by name:
  first what the summarizer added (its restatements and merges), oldest first, then the
  agents' own, least recently stated first (a later report restating one renews it).
  Duplicates are not added; an index finds them without comparing with every constraint.
- Decisions from agent reports are deduplicated on exact wording (two different decisions may
  share most words); constraints from reports, and everything the summarizer adds, also on
  restatements (`words.claim_words`: the same rule in other words), because models restate
  stored rules in their own words. A restatement renews the stored item (`renew`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal, TypeVar

from context_agent.budget import (
    CONSTRAINT_TOKENS,
    DECISION_TOKENS,
    MAX_ACTIVE_CONSTRAINTS,
    MAX_RETIRED_CONSTRAINTS,
    MAX_STORED_DECISIONS,
    MAX_STORED_FAILURES,
    PREVENTION_TOKENS,
)
from context_agent.memory.stores import (
    ActiveConstraints,
    Constraint,
    ContextStores,
    Decision,
    Failure,
    FailureMemory,
    ItemSource,
    KeyDecisions,
    RetiredConstraint,
)
from context_agent.memory.text_index import TextIndex
from context_agent.records.report_reading import AgentReport
from context_agent.text import clip_item
from context_agent.words import find_near_duplicate, normalized_key

_Item = TypeVar("_Item", Decision, Failure)


def _find_same(existing: list[str], new: str, source: ItemSource) -> int | None:
    """Index of the stored text that `new` repeats, or None."""
    if source == "summarizer":
        return find_near_duplicate(new, existing)
    key = normalized_key(new)
    return next((index for index, text in enumerate(existing) if normalized_key(text) == key), None)


def add_decision(
    store: KeyDecisions, text: str, feature_id: str, *, category: str, source: ItemSource, now: int
) -> Decision | None:
    """Record a decision; returns it, or None when empty or already stored."""
    text = clip_item(text, DECISION_TOKENS)
    if not text or not feature_id:
        return None
    same = _find_same([decision.text for decision in store.decisions], text, source)
    if _kept_as_stored(store, None if same is None else store.decisions[same], feature_id, source):
        return None
    seq = _take_seq(store)
    decision = Decision(
        id=f"D{seq}", text=text, feature_id=feature_id, category=category,
        source=source, created_at=now, seq=seq,
    )
    store.decisions = _newest(store.decisions, decision, MAX_STORED_DECISIONS)
    return decision


def _kept_as_stored(
    store: KeyDecisions | ActiveConstraints, stored: Decision | Constraint | None, feature_id: str, source: ItemSource
) -> bool:
    """Whether the new item only repeats `stored` (then nothing is added). An agent's report
    restating what another feature recorded renews it: the rule is still being followed."""
    if stored is None:
        return False
    if source == "report" and stored.feature_id != feature_id:
        renew(store, stored)
    return True


def _take_seq(store: KeyDecisions | ActiveConstraints | FailureMemory) -> int:
    """The next recording order number of `store` (recency decides eviction)."""
    seq, store.next_seq = store.next_seq, store.next_seq + 1
    return seq


def _newest(items: list[_Item], new: _Item, cap: int) -> list[_Item]:
    """`items` with `new` added, keeping the `cap` most recently recorded (by `seq`)."""
    items.append(new)
    if len(items) > cap:
        items.sort(key=lambda item: item.seq)
        del items[: len(items) - cap]
    return items


def renew(store: KeyDecisions | ActiveConstraints, item: Decision | Constraint, wording: str = "") -> None:
    """`item` was stated again: it counts as recorded now (recency decides eviction), and takes
    `wording` when given (the summarizer said its restatement `replaces` the stored text)."""
    item.seq = _take_seq(store)
    if isinstance(item, Decision):
        item.text = clip_item(wording, DECISION_TOKENS) or item.text
        return
    new_wording = clip_item(wording, CONSTRAINT_TOKENS)
    if new_wording and new_wording != item.description:
        item.description = new_wording
        if isinstance(store, ActiveConstraints):
            store._index = None  # it indexes the old wording


def retire_decisions(store: KeyDecisions, ids: Iterable[str]) -> int:
    """Remove the decisions with these ids; returns how many were removed."""
    doomed = set(ids)
    before = len(store.decisions)
    store.decisions = [item for item in store.decisions if item.id not in doomed]
    return before - len(store.decisions)


def add_constraint(
    store: ActiveConstraints, description: str, feature_id: str, *,
    category: str, source: ItemSource, now: int,
) -> Constraint | None:
    """Record an active constraint; returns it, or None when empty or already active (an
    agent's report restating one from another feature renews it)."""
    description = clip_item(description, CONSTRAINT_TOKENS)
    if not description:
        return None
    index = _constraint_index(store)
    same = index.near_duplicate(description)
    if _kept_as_stored(store, None if same is None else store.constraints[same], feature_id, source):
        return None
    seq = _take_seq(store)
    constraint = Constraint(
        id=f"C{seq}", description=description, feature_id=feature_id, category=category,
        source=source, created_at=now, seq=seq,
    )
    store.constraints.append(constraint)
    index.add(description)
    return constraint


def enforce_constraint_limit(store: ActiveConstraints, *, now: int) -> list[Constraint]:
    """Retire the constraints beyond `MAX_ACTIVE_CONSTRAINTS` (see the module docstring for
    which); returns them, for the caller to report."""
    excess = len(store.constraints) - MAX_ACTIVE_CONSTRAINTS
    if excess <= 0:
        return []
    doomed = sorted(store.constraints, key=lambda item: (item.source == "report", item.seq))[:excess]
    retire_constraints(store, [item.id for item in doomed], by="limit", now=now)
    return doomed


def _constraint_index(store: ActiveConstraints) -> TextIndex:
    """The index of `store.constraints`, rebuilt when the list was replaced or changed elsewhere."""
    cached = store._index
    if cached is not None and cached[0] is store.constraints and len(cached[1]) == len(store.constraints):
        cached_index: TextIndex = cached[1]
        return cached_index
    index = TextIndex(item.description for item in store.constraints)
    store._index = (store.constraints, index)
    return index


def retire_constraints(store: ActiveConstraints, ids: Iterable[str], *, by: str, now: int) -> int:
    """Move the constraints with these ids to `retired`; returns how many moved."""
    doomed = set(ids)
    keep: list[Constraint] = []
    for item in store.constraints:
        if item.id in doomed:
            store.retired.append(
                RetiredConstraint(**item.model_dump(), retired_at=now, retired_by=by)
            )
        else:
            keep.append(item)
    moved = len(store.constraints) - len(keep)
    store.constraints = keep
    del store.retired[: max(0, len(store.retired) - MAX_RETIRED_CONSTRAINTS)]
    return moved


def add_failure(
    store: FailureMemory, feature_id: str, *, attempt: int, command: str, exit_code: int | None,
    description: str, prevention: str, prevention_source: Literal["default", "agent", "summarizer"],
    now: int, files: Sequence[str] = (),
) -> Failure | None:
    """Record a failure; a repeat of a stored one (same feature and description) refreshes it.
    Returns the new entry, or None when it was a repeat or empty."""
    if not description:
        return None
    seq = _take_seq(store)
    key = normalized_key(description)
    for failure in store.failures:
        if failure.feature_id == feature_id and normalized_key(failure.description) == key:
            failure.attempt, failure.seq, failure.created_at = attempt, seq, now
            failure.files = _failure_files([*failure.files, *files])
            return None
    failure = Failure(
        id=f"F{seq}", feature_id=feature_id, attempt=attempt, command=command,
        exit_code=exit_code, description=description,
        prevention=clip_item(prevention, PREVENTION_TOKENS),
        prevention_source=prevention_source, created_at=now, seq=seq, files=_failure_files(files),
    )
    store.failures = _newest(store.failures, failure, MAX_STORED_FAILURES)
    return failure


MAX_FAILURE_FILES = 200
"""Files kept with a failure (a failure file is rewritten whole at every record)."""


def _failure_files(files: Iterable[str]) -> list[str]:
    return sorted(set(files))[:MAX_FAILURE_FILES]


def set_prevention(
    store: FailureMemory, feature_id: str, prevention: str,
    source: Literal["agent", "summarizer"],
) -> int:
    """Mark the feature's failures resolved (it passed), and give those that still carry the
    default prevention this one (or, if none does, its latest failure). Returns how many entries changed."""
    prevention = clip_item(prevention, PREVENTION_TOKENS)
    mine = [item for item in store.failures if item.feature_id == feature_id]
    newly_resolved = [item for item in mine if not item.resolved]
    for item in newly_resolved:
        item.resolved = True
    if not prevention or not mine:
        return len(newly_resolved)
    targets = [item for item in mine if item.prevention_source == "default"]
    if not targets:
        targets = [max(mine, key=lambda item: item.seq)]
    for item in targets:
        item.prevention, item.prevention_source = prevention, source
    return len(set(map(id, targets + newly_resolved)))


def ingest_report(stores: ContextStores, feature_id: str, report: AgentReport, category: str, now: int) -> tuple[int, int]:
    """Add a report's decisions and constraints; returns how many of each were new."""
    decisions = constraints = 0
    for text in report.decisions:
        if add_decision(stores.decisions, text, feature_id, category=category, source="report", now=now):
            decisions += 1
    for text in report.constraints:
        if add_constraint(stores.constraints, text, feature_id, category=category, source="report", now=now):
            constraints += 1
    return decisions, constraints
