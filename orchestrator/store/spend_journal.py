"""Money in the state journal: one `{"spend": {...}}` line per model call event.

`reserve` before a call is sent (its worst case), `call` with its usage and cost when its
answer arrives (`unconfirmed` when it was interrupted in flight), `release` when the API
answered with an error. Replaying them rebuilds the run's totals; a reservation never
answered counts as its worst case, so a killed run never records less than the API billed.
"""

from __future__ import annotations

import math

from pydantic import field_validator

from orchestrator.llm.costs.pricing import TokenUsage
from orchestrator.llm.costs.spend import SpendEntry as ModelCallSpend
from orchestrator.spec.fields import is_safe_id
from orchestrator.store.run_state import RunState


class CheckedSpendEntry(ModelCallSpend):
    """One journaled spend line as read back: the client's `SpendEntry`, its values checked."""

    @field_validator("feature")
    @classmethod
    def _safe_feature(cls, feature_id: str | None) -> str | None:
        if feature_id is not None and not is_safe_id(feature_id):
            raise ValueError(f"feature id {feature_id[:60]!r} is not a safe id")
        return feature_id

    @field_validator("call")
    @classmethod
    def _short_call(cls, call: str | None) -> str | None:
        if call is not None and len(call) > 64:
            raise ValueError("call is not a short call id")
        return call

    @field_validator("cost_usd", mode="before")
    @classmethod
    def _finite_amount(cls, cost: object) -> object:
        if isinstance(cost, bool) or not isinstance(cost, (int, float)) or not math.isfinite(cost) or cost < 0:
            raise ValueError("costUsd is not a finite amount")
        return cost


# Calls sent and not answered yet, by (purpose, feature, call): with `--jobs N` several workers'
# calls are in flight at once, and each answer closes its own worker's reservation; Claude Code
# may have several of one feature's in flight, told apart by `call`.
OpenCalls = dict[tuple[str | None, str | None, str | None], CheckedSpendEntry]


def replay_spend(state: RunState, spend: CheckedSpendEntry, open_calls: OpenCalls) -> None:
    """Apply one spend line to `state`, keeping `open_calls` (reservations not answered yet) up to date."""
    key = (spend.purpose, spend.feature, spend.call)
    if spend.kind == "reserve":
        earlier = open_calls.get(key)
        if earlier is not None:  # two reservations in a row for one caller: the first one's answer never came
            close_unanswered(state, earlier)
        open_calls[key] = spend
        return
    open_calls.pop(key, None)
    if spend.kind != "call":
        return
    if spend.unconfirmed:  # interrupted in flight: its worst case (the client writes no usage with it)
        _add_to_feature(state, spend, TokenUsage())
        state.totals = state.totals.with_unconfirmed(spend.cost_usd, spend.purpose)
    else:
        _add_to_feature(state, spend, spend.usage or TokenUsage())
        state.totals = state.totals.with_call(spend.model, spend.usage or TokenUsage(), spend.cost_usd, spend.purpose)


def close_all_unanswered(state: RunState, open_calls: OpenCalls) -> None:
    """Calls still open when the journal ends (killed mid-call): each counts at its worst case."""
    for reserved in open_calls.values():
        close_unanswered(state, reserved)
    open_calls.clear()


def close_unanswered(state: RunState, reserved: CheckedSpendEntry) -> None:
    """A call sent and never answered: the API may have billed it, so its worst case counts."""
    _add_to_feature(state, reserved, TokenUsage())
    state.totals = state.totals.with_unconfirmed(reserved.cost_usd, reserved.purpose)


def _add_to_feature(state: RunState, spend: CheckedSpendEntry, usage: TokenUsage) -> None:
    """Count one agent call's cost (and usage) in its feature's state (the run's: `RunTotals`)."""
    if spend.purpose != "summarizer" and spend.feature:
        entry = state.feature(spend.feature)
        entry.cost_usd += spend.cost_usd
        entry.tokens = entry.tokens + usage
