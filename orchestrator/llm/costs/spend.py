"""What model calls cost: the run's counter (`RunSpend`) and its snapshot (`RunTotals`), a client's
books (`Spend`), and the journal line of each call (`SpendEntry`)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from orchestrator.json_types import JsonObject
from orchestrator.llm.costs.pricing import TokenUsage


class ModelSpend(BaseModel):
    """One model's share of a run: answered calls, their tokens and cost."""

    model_config = ConfigDict(populate_by_name=True)

    calls: int = 0
    tokens: TokenUsage = Field(default_factory=TokenUsage)
    cost_usd: float = Field(0.0, alias="costUsd")


class SpendEntry(BaseModel):
    """One journaled spend line, as `ModelClient` writes it and the state store replays it.

    `reserve` before a call is sent (its worst case in `cost_usd`), `call` with its usage and
    cost when its answer arrives (`unconfirmed`, without usage, when it was interrupted in
    flight), `release` when the API answered with an error. `model` names the model of a
    reserve or call line (absent from lines written before escalation existed). `call` tells
    apart the calls of one feature in flight at once (Claude Code's, through the metering
    proxy); absent where calls go one at a time.
    """

    model_config = ConfigDict(populate_by_name=True)

    kind: Literal["reserve", "call", "release"]
    purpose: str | None = None  # "agent" or "summarizer"
    feature: str | None = None
    cost_usd: float = Field(0.0, alias="costUsd")
    usage: TokenUsage | None = None
    unconfirmed: bool = False
    model: str | None = None
    call: str | None = None

    def dump(self) -> JsonObject:
        """The line's JSON: only the keys its kind uses, as the journal has always held them."""
        data: JsonObject = {"kind": self.kind, "purpose": self.purpose, "feature": self.feature}
        if self.kind != "release":
            data["costUsd"] = self.cost_usd
        if self.usage is not None:
            data["usage"] = self.usage.dump()
        if self.unconfirmed:
            data["unconfirmed"] = True
        if self.model is not None:
            data["model"] = self.model
        if self.call is not None:
            data["call"] = self.call
        return data


class RunTotals(BaseModel):
    """What a run's calls have cost, at one moment: the snapshot of a `RunSpend`.

    The one declaration of the run's money. Stored as `totals` in execution-state.json (camelCase
    keys, as the product spec gives them); a state journal's spend lines are replayed onto it
    with the same `with_call` and `with_unconfirmed` a live run books with.
    """

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True)

    tokens: TokenUsage = Field(default_factory=TokenUsage)
    cost_usd: float = 0.0
    api_calls: int = 0
    summarizer_tokens: TokenUsage = Field(default_factory=TokenUsage)
    summarizer_cost_usd: float = 0.0
    # The worst case of calls whose answer never arrived (the run was killed or interrupted
    # while they were in flight): the API may have billed them, so it is part of `cost_usd`.
    unconfirmed_cost_usd: float = 0.0
    unconfirmed_calls: int = 0  # how many calls it covers (0 in states written before it was counted)
    # Answered calls per model (`--escalate-model` runs use two); absent from older states.
    by_model: dict[str, ModelSpend] = Field(default_factory=dict, exclude_if=lambda spend: not spend)

    def with_call(self, model: str | None, usage: TokenUsage, cost: float, purpose: str | None) -> RunTotals:
        """These totals and one answered call (of `model`, when known; a summarizer's counts twice:
        in the run's figures and in the summarizer's)."""
        update: dict[str, object] = {
            "tokens": self.tokens + usage, "cost_usd": self.cost_usd + cost, "api_calls": self.api_calls + 1,
        }
        if model:
            share = self.by_model.get(model, ModelSpend())
            update["by_model"] = {**self.by_model, model: ModelSpend(
                calls=share.calls + 1, tokens=share.tokens + usage, cost_usd=share.cost_usd + cost)}
        if purpose == "summarizer":
            update["summarizer_tokens"] = self.summarizer_tokens + usage
            update["summarizer_cost_usd"] = self.summarizer_cost_usd + cost
        return self.model_copy(update=update)

    def with_unconfirmed(self, worst: float, purpose: str | None, calls: int = 1) -> RunTotals:
        """These totals and `calls` calls cut off in flight, counted at their worst case."""
        update: dict[str, object] = {
            "cost_usd": self.cost_usd + worst, "unconfirmed_cost_usd": self.unconfirmed_cost_usd + worst,
            "unconfirmed_calls": self.unconfirmed_calls + calls,
        }
        if purpose == "summarizer":
            update["summarizer_cost_usd"] = self.summarizer_cost_usd + worst
        return self.model_copy(update=update)


class RunSpend:
    """The run's money counter: every client of the run books into one (`--jobs N`: from
    several threads at once, hence the lock); `snapshot()` is what the state stores."""

    def __init__(self, totals: RunTotals | None = None) -> None:
        self._lock = threading.Lock()
        self._totals = totals or RunTotals()

    def snapshot(self) -> RunTotals:
        return self._totals

    def restore(self, totals: RunTotals) -> None:
        """Count on from what a previous run recorded (a resumed run's state)."""
        with self._lock:
            self._totals = totals

    def book_call(self, model: str | None, usage: TokenUsage, cost: float, purpose: str | None) -> None:
        with self._lock:
            self._totals = self._totals.with_call(model, usage, cost, purpose)

    def book_unconfirmed(self, worst: float, purpose: str | None, calls: int = 1) -> None:
        with self._lock:
            self._totals = self._totals.with_unconfirmed(worst, purpose, calls)

    @property
    def cost_usd(self) -> float:
        return self._totals.cost_usd

    @property
    def tokens(self) -> TokenUsage:
        return self._totals.tokens

    @property
    def calls(self) -> int:
        return self._totals.api_calls


@dataclass
class Spend:
    """One client's books: the run's counter (shared by every client of the run) and what the
    current feature's agent calls have cost."""

    run: RunSpend = field(default_factory=RunSpend)
    feature_id: str | None = None  # the feature the agent's calls are for, named in the journal
    feature_tokens: TokenUsage = field(default_factory=TokenUsage)
    feature_cost_usd: float = 0.0
