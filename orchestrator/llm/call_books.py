"""A model client's money: the caps checked before a call, its worst case reserved, its cost booked.

`CallBooks` is what `ModelClient` books with, and what Claude Code's calls are booked with too
(`orchestrator.claude_code`): through the metering proxy call by call (`open_call`, then
`close_call`), or on a Claude plan attempt by attempt (`reserve_budget`, then `close_call` with
the cost Claude Code reports). Every step is journaled as it happens (`journal`): a worst case
before the call is sent, its usage as soon as its answer arrives. A call cut off by an
interrupt counts at its worst case (`RunTotals.unconfirmed_cost_usd`): the API may have billed it.
With `--jobs N`, workers' books share one `SpendPool` (`reservations`), where each call
reserves its worst case before it is sent.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Literal

from orchestrator.json_types import BookedRequest
from orchestrator.llm.attempt_model import fit_thinking_budget
from orchestrator.llm.client_settings import ClientSettings
from orchestrator.llm.costs.pricing import PriceTable, TokenUsage, usd
from orchestrator.llm.costs.reservations import SpendPool
from orchestrator.llm.costs.spend import Spend, SpendEntry
from orchestrator.llm.errors import LimitReached
from orchestrator.llm.request_tokens import request_tokens

# Estimates of input size err high, but not always enough: keep a margin on top.
_INPUT_MARGIN = 1.25
_MIN_OUTPUT_TOKENS = 1024
_MIN_BUDGET_USD = 0.01  # an attempt given less could not make one call


class CallBooks:
    """The run's limits and books, as one client (one worker's, under `--jobs`) sees them."""

    def __init__(
        self, settings: ClientSettings, spend: Spend, *, on_retry: Callable[[str], None] = lambda _m: None,
        journal: Callable[[SpendEntry], None] = lambda _entry: None, pool: SpendPool | None = None,
    ) -> None:
        if pool is not None and pool.run is not spend.run:
            raise ValueError("a client on a spend pool books into the pool's run counter: Spend(run=pool.run)")
        self.settings = settings
        self.spend = spend
        self.pool = pool
        self.prices: PriceTable = settings.prices
        self.on_retry = on_retry
        self.journal = journal

    # ---- limits ---------------------------------------------------------------------------
    def affordable_max_tokens(
        self, model: str, request: BookedRequest, *, feature_cap: bool, input_tokens: int | None = None
    ) -> int:
        """The largest max_tokens this call may use without passing a cap; LimitReached if too small.

        `input_tokens` is the request's estimated size when the caller keeps it up to date
        (the agent loop does, message by message); otherwise the whole request is measured.
        """
        wanted = int(request.get("max_tokens", self.settings.max_output_tokens))
        input_estimate = self._input_estimate(request, input_tokens)
        allowed = wanted
        if self.settings.max_cost is not None:
            price = self.prices.price_for(model)
            worst_input_cost = input_estimate * max(price.input, price.cache_write) / 1_000_000
            committed = self.committed_usd()
            remaining = self.settings.max_cost - committed - worst_input_cost
            allowed = min(allowed, int(remaining * 1_000_000 / price.output) if remaining > 0 else 0)
            if allowed < min(_MIN_OUTPUT_TOKENS, wanted):
                raise LimitReached(
                    f"cost cap {usd(self.settings.max_cost)} reached: ${committed:.4f} spent or reserved and the next "
                    f"call could cost up to ${worst_input_cost + wanted * price.output / 1_000_000:.4f} "
                    "(raise --max-cost and run again to resume)"
                )
        if feature_cap:
            remaining_tokens = self.settings.max_feature_tokens - self.spend.feature_tokens.total - input_estimate
            allowed = min(allowed, int(remaining_tokens))
            if allowed < min(_MIN_OUTPUT_TOKENS, wanted):
                raise LimitReached(
                    f"per-feature token cap {self.settings.max_feature_tokens:,} reached "
                    f"({self.spend.feature_tokens.total:,} used; raise max_feature_tokens and run again to resume)"
                )
        return allowed

    def committed_usd(self) -> float:
        """What the run has spent, and reserved for calls in flight."""
        return self.spend.run.cost_usd + (self.pool.reserved_usd if self.pool is not None else 0.0)

    def worst_case_cost(self, model: str, request: BookedRequest, input_tokens: int | None = None) -> float:
        """The most this request can cost: every input token at the dearer of input and cache
        write, and all of `max_tokens` as output."""
        price = self.prices.price_for(model)
        input_cost = self._input_estimate(request, input_tokens) * max(price.input, price.cache_write)
        return (input_cost + int(request.get("max_tokens", 0)) * price.output) / 1_000_000

    @staticmethod
    def _input_estimate(request: BookedRequest, input_tokens: int | None) -> float:
        return (request_tokens(request) if input_tokens is None else input_tokens) * _INPUT_MARGIN

    def open_call(
        self, request: BookedRequest, *, purpose: str, input_tokens: int | None = None, call: str | None = None
    ) -> float:
        """Before a call is sent: the caps checked, `request["max_tokens"]` lowered to what they
        allow (LimitReached when too little is left), its worst case reserved and journaled.
        Returns that worst case, for `close_call`. `call` tells apart calls of one caller in flight
        at once (the metering proxy's)."""
        model = request["model"]
        if input_tokens is None:
            input_tokens = request_tokens(request)
        with self._money():
            if self.pool is not None:
                self.pool.raise_if_stopped()  # the run is stopping: send nothing more
            request["max_tokens"] = self.affordable_max_tokens(
                model, request, feature_cap=purpose == "agent", input_tokens=input_tokens
            )
            dropped = fit_thinking_budget(request, request["max_tokens"])
            if dropped:
                self.on_retry(dropped)  # the run's warning line
            worst = self.worst_case_cost(model, request, input_tokens)
            if self.pool is not None:  # checked and reserved at once: no other worker slips in between
                self.pool.hold(worst)
            self._journal(SpendEntry(kind="reserve", purpose=purpose, cost_usd=worst, model=model, call=call))
        return worst

    def close_call(
        self, purpose: str, model: str, worst: float, usage: TokenUsage | Literal["unknown"] | None,
        call: str | None = None, cost: float | None = None,
    ) -> float:
        """After an `open_call`: its reservation ends and the call is booked: at `usage` when
        answered, at nothing when the API answered with an error (None), at its worst case when
        nobody knows whether the API billed it ("unknown": cut off in flight). `cost`, when given, is
        what was billed as reported (a Claude plan attempt), instead of `usage` priced. Returns it."""
        with self._money():
            self._release(worst)
            if usage is None:
                self._journal(SpendEntry(kind="release", purpose=purpose, call=call))
                return 0.0
            if usage == "unknown":
                self._book_unconfirmed(purpose, worst, model, call)
                return worst
            return self._book(model, usage, purpose, call, cost)

    def reserve_budget(self, *, model: str, call: str, ceiling: float) -> float:
        """Before an agent's attempt that is capped as a whole (Claude Code on a Claude plan): its
        budget, reserved and journaled as its worst case, for `close_call`, so that an attempt
        killed before it reports is booked at it. That is `ceiling` (the attempt's own budget,
        `plan_attempt_budget`), or its share of what `--max-cost` leaves (spent and reserved taken
        off, split between the `--jobs` workers) when smaller; LimitReached when less than a cent is left."""
        with self._money():
            if self.pool is not None:
                self.pool.raise_if_stopped()
            budget = ceiling
            if self.settings.max_cost is not None:
                share = (self.settings.max_cost - self.committed_usd()) / self.settings.jobs
                if share < _MIN_BUDGET_USD:
                    raise LimitReached(f"cost cap {usd(self.settings.max_cost)} reached: ${self.committed_usd():.4f} "
                                       "spent or reserved (raise --max-cost and run again to resume)")
                budget = min(share, ceiling)
            if self.pool is not None:
                self.pool.hold(budget)
            self._journal(SpendEntry(kind="reserve", purpose="agent", cost_usd=budget, model=model, call=call))
        return budget

    def _money(self) -> contextlib.AbstractContextManager[object]:  # the pool's lock; a lone client holds none
        return self.pool.lock if self.pool is not None else contextlib.nullcontext()

    def _release(self, worst: float) -> None:
        if self.pool is not None:
            self.pool.release(worst)

    def _book(self, model: str, usage: TokenUsage, purpose: str, call: str | None, cost: float | None) -> float:
        cost = self.prices.cost(model, usage) if cost is None else cost
        if self.pool is not None and self.pool.closed:  # the run gave up on this call and booked its worst case
            return cost
        spend = self.spend
        spend.run.book_call(model, usage, cost, purpose)
        if purpose == "agent":  # the summarizer's (and the impact model's) count in the run's totals only
            spend.feature_tokens = spend.feature_tokens + usage
            spend.feature_cost_usd += cost
        self._journal(SpendEntry(kind="call", purpose=purpose, cost_usd=cost, usage=usage, model=model, call=call))
        return cost

    def _book_unconfirmed(self, purpose: str, worst: float, model: str, call: str | None) -> None:
        if self.pool is not None and self.pool.closed:
            return
        self.spend.run.book_unconfirmed(worst, purpose)
        if purpose == "agent":
            self.spend.feature_cost_usd += worst
        try:
            self._journal(SpendEntry(kind="call", purpose=purpose, cost_usd=worst, unconfirmed=True, model=model,
                                     call=call))
        except OSError:
            pass  # the open reservation counts as the same worst case when the journal is loaded

    def _journal(self, entry: SpendEntry) -> None:
        entry.feature = self.spend.feature_id if entry.purpose == "agent" else None
        self.journal(entry)

