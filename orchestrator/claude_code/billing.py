"""Who pays for Claude Code's calls, and how `--max-cost` holds in each case.

Two ways, chosen from the run's provider and environment (`billing_mode`):

- `api-key`: ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) is set, or the run is on Amazon Bedrock
  or Google Vertex AI (`--provider bedrock|vertex`, paid by the user's cloud account). Every call
  goes through the metering proxy (`metering_proxy`), which checks the cap before each call and
  books it exactly; on Bedrock and Vertex the proxy sends it with the run's own SDK client for
  that provider (`provider_relay`), whose AWS or Google credentials stay in this process.
- `claude-plan`: no key, and neither Bedrock nor Vertex. The installed Claude Code uses the
  user's own sign-in (`claude auth login`) and talks to Anthropic itself, with no proxy. This
  program never reads, copies or stores those credentials. Each attempt gets a budget (the
  SDK's `max_budget_usd`: `plan_attempt_budget`, or `--max-cost`'s share when smaller),
  reserved in the books before it starts (`PlanAttempt`), and the cost
  Claude Code reports for the attempt (`ResultMessage.total_cost_usd`) is booked when it ends.
  `--max-cost` is then enforced per attempt, not per call: Claude Code checks its budget
  between calls, so an attempt may pass it by the call that crossed it. An attempt killed
  before it reports counts at its whole budget, with or without `--max-cost`. The run then
  makes no model call of its own (`makes_own_calls`): the Context Agent folds its summary
  without the summarizer model, and a merge conflict under `--jobs` gets a new attempt
  instead of the focused model step.

Claude Code's own CLAUDE_CODE_USE_BEDROCK / _VERTEX would have the CLI sign its calls itself,
with the cloud credentials in its environment and no proxy: they are taken as a request for
`--provider bedrock|vertex`, which must then be given, and never reach the CLI (`launch`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Literal, Protocol

from orchestrator.agent_settings import DEFAULT_PLAN_ATTEMPT_BUDGET
from orchestrator.claude_code.metering.sse_usage import api_usage
from orchestrator.config import ConfigError
from orchestrator.json_types import JsonObject
from orchestrator.llm.call_books import CallBooks
from orchestrator.llm.costs.pricing import usd
from orchestrator.llm.errors import LimitReached
from orchestrator.store.event_kinds import ApiCall

BillingMode = Literal["api-key", "claude-plan"]
_KEY_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
_CLOUD_VARIABLES = {"CLAUDE_CODE_USE_BEDROCK": "bedrock", "CLAUDE_CODE_USE_VERTEX": "vertex"}
_CLOUD_NAMES = {"bedrock": "Amazon Bedrock (your AWS account)", "vertex": "Google Vertex AI (your Google Cloud project)"}
OVER_BUDGET = "error_max_budget_usd"  # the result subtype of a session stopped by its budget


def billing_mode(provider: str, environ: Mapping[str, str] | None = None) -> BillingMode:
    """How a `--agent claude-code` run is paid for; ConfigError when Claude Code's own cloud
    variable names another provider than the run's."""
    env = os.environ if environ is None else environ
    for name, cloud in _CLOUD_VARIABLES.items():
        if env.get(name) and provider != cloud:
            raise ConfigError(f"{name} is set: run with --provider {cloud} (orchestrate then sends Claude Code's "
                              f"calls to {cloud} itself, metered), or unset it")
    if provider != "anthropic":
        return "api-key"
    return "api-key" if any(env.get(name) for name in _KEY_VARIABLES) else "claude-plan"


def makes_own_calls(agent: str, provider: str, environ: Mapping[str, str] | None = None) -> bool:
    """Whether a run makes model calls with its own client (and so needs a key): always, except
    Claude Code on a Claude plan, where the summarizer is left out and Claude Code pays."""
    return agent != "claude-code" or billing_mode(provider, environ) == "api-key"


def describe_billing(
    mode: BillingMode, max_cost: float | None, provider: str = "anthropic",
    attempt_budget: float = DEFAULT_PLAN_ATTEMPT_BUDGET,
) -> str:
    """One plain line on who pays and how the cap holds, for `doctor`, the live view and the run's start."""
    cap = "no --max-cost" if max_cost is None else f"--max-cost {usd(max_cost)}"
    if mode == "api-key":
        payer = _CLOUD_NAMES.get(provider, "API key")
        return f"{payer}, metered by orchestrate: {cap}, checked before every call"
    return (f"your Claude plan, through Claude Code's own sign-in (no API key): {cap}, enforced per attempt, "
            f"not per call; each attempt at most {usd(attempt_budget)} (plan_attempt_budget); "
            "cost as Claude Code reports it")


class SessionResult(Protocol):
    """What a Claude Code session reports at its end (the SDK's `ResultMessage`)."""

    subtype: str
    num_turns: int
    total_cost_usd: float | None
    usage: JsonObject | None


class PlanAttempt:
    """One attempt on a Claude plan: its budget reserved before, the reported cost booked after.

        with PlanAttempt(session.client, model=..., feature_id=..., attempt=..., on_event=..., ceiling=...) as plan:
            options.max_budget_usd = plan.budget          # ceiling, or --max-cost's share when smaller
            ... run the session; on its ResultMessage: plan.record(result) ...
        plan.raise_if_capped()                           # LimitReached when the budget stopped it

    An attempt that ends without `record` (killed, interrupted, failed) is booked at its budget,
    so there is always one: `ceiling` (`plan_attempt_budget`) bounds it without `--max-cost`.
    `record` emits the attempt's one `api_call` event (its turns in `turn`, its cost as reported).
    """

    def __init__(
        self, books: CallBooks, *, model: str, feature_id: str, attempt: int, on_event: Callable[[ApiCall], None],
        ceiling: float = DEFAULT_PLAN_ATTEMPT_BUDGET,
    ) -> None:
        self.books, self.model, self.feature_id, self.attempt, self.on_event = books, model, feature_id, attempt, on_event
        self.call, self.ceiling = f"plan.{attempt}", ceiling
        self.budget = 0.0
        self._open = False
        self._over_budget = False

    def __enter__(self) -> PlanAttempt:
        self.budget = self.books.reserve_budget(model=self.model, call=self.call, ceiling=self.ceiling)  # LimitReached: not started
        self._open = True
        return self

    def record(self, result: SessionResult) -> None:
        """Book what Claude Code reports the session cost (at its budget if it reports no cost)."""
        if not self._open:
            return
        self._open = False
        self._over_budget = result.subtype == OVER_BUDGET
        worst = self.budget
        if result.total_cost_usd is None:
            self.books.close_call("agent", self.model, worst, "unknown", call=self.call)
            return
        usage = api_usage(result.usage)
        cost = self.books.close_call("agent", self.model, worst, usage, call=self.call, cost=result.total_cost_usd)
        spend = self.books.spend
        self.on_event(ApiCall(
            id=self.feature_id, feature=self.feature_id, turn=result.num_turns, attempt=self.attempt, model=self.model,
            usage=usage, cost_usd=round(cost, 6), stop_reason=result.subtype,
            run_tokens=spend.run.tokens.total, run_cost_usd=round(spend.run.cost_usd, 6),
        ))

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None) -> None:
        if self._open:  # no report: Claude Code may have spent all of the budget
            self._open = False
            self.books.close_call("agent", self.model, self.budget, "unknown", call=self.call)

    def raise_if_capped(self) -> None:
        """LimitReached when the session stopped on a budget that `--max-cost` set (its share, smaller than
        `ceiling`): the run's cap is reached. Stopped at `ceiling`, the attempt just failed."""
        max_cost = self.books.settings.max_cost
        if self._over_budget and max_cost is not None and self.budget < self.ceiling:
            raise LimitReached(f"cost cap {usd(max_cost)} reached: Claude Code stopped at its attempt's budget "
                               "(raise --max-cost and run again to resume)")
