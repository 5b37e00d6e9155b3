"""What model calls cost: the running books (`Spend`) and the journal line of each call (`SpendEntry`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from orchestrator.json_types import JsonObject
from orchestrator.llm.costs.pricing import TokenUsage


class ModelSpend(BaseModel):
    """One model's share of a run: answered calls, their tokens and cost."""

    model_config = ConfigDict(populate_by_name=True)

    calls: int = 0
    tokens: TokenUsage = Field(default_factory=TokenUsage)
    cost_usd: float = Field(0.0, alias="costUsd")

    def add(self, usage: TokenUsage, cost: float) -> None:
        self.calls += 1
        self.tokens = self.tokens + usage
        self.cost_usd += cost


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


@dataclass
class Spend:
    """What calls have cost so far: the run's and the current feature's."""

    run_cost_usd: float = 0.0
    run_tokens: TokenUsage = field(default_factory=TokenUsage)
    feature_tokens: TokenUsage = field(default_factory=TokenUsage)
    feature_cost_usd: float = 0.0
    summarizer_tokens: TokenUsage = field(default_factory=TokenUsage)
    summarizer_cost_usd: float = 0.0
    calls: int = 0
    unconfirmed_cost_usd: float = 0.0  # worst case of calls cut off before their answer (in run_cost_usd too)
    unconfirmed_calls: int = 0  # how many calls that worst case covers
    feature_id: str | None = None  # the feature the agent's calls are for, named in the journal
    by_model: dict[str, ModelSpend] = field(default_factory=dict)  # answered calls, per model

    def book_model(self, model: str, usage: TokenUsage, cost: float) -> None:
        """Count one answered call of `model`."""
        self.by_model.setdefault(model, ModelSpend()).add(usage, cost)
