"""Goals 3, 4 and 5: what each context strategy costs in input tokens over the same run,
how much of the input the prompt cache serves, and the summarizer's share.

The same multi-turn features (5 model calls each) run once per strategy against the fake
API in this process, whose ledger bills usage by the API's caching rules. Input tokens are
every prompt token however billed (plain input, cache writes and cache reads), of the coding
agent and the summarizer together. Dollars are the billed usage priced by the product's own
table (`orchestrator.llm.costs.pricing`) for the default models: the agent's on Sonnet, the summarizer's
on Haiku, cache writes at 1.25x input and reads at 0.1x.
"""

from __future__ import annotations

from typing import Any

from bench.harness import run_project
from bench.plans import multi_turn_plan, spec_document
from bench.summarizers import diligent_summarizer
from orchestrator.config import ContextStrategy, RunConfig
from orchestrator.llm.costs.pricing import PriceTable, TokenUsage
from fake_messages_api.billing.ledger import UsageReport
from fake_messages_api.billing.ledger import UsageTotals

STRATEGIES: tuple[ContextStrategy, ...] = ("compressed", "window", "replay")


def measure(features: int = 100) -> dict[str, Any]:
    usage = {strategy: _usage(spec_document(features), strategy) for strategy in STRATEGIES}
    # One sentence of description instead of a paragraph: the prefix every call shares (tools
    # and system prompt) then falls under the model's 1024-token caching minimum.
    terse = _usage(spec_document(features, description="A service built feature by feature."), "compressed")
    inputs = {strategy: report.total.prompt_tokens for strategy, report in usage.items()}
    dollars = {strategy: _dollars(report) for strategy, report in usage.items()}
    compressed = usage["compressed"]
    return {
        "features": features,
        "input_tokens": inputs,
        "compressed_vs_replay_saving": 1 - inputs["compressed"] / inputs["replay"],
        "cache_read_share": compressed.agent.cache_read_share,
        "cache_read_share_terse_description": terse.agent.cache_read_share,
        "agent_input": {
            "cache_read": compressed.agent.cache_read_input_tokens,
            "cache_write": compressed.agent.cache_creation_input_tokens,
            "uncached": compressed.agent.input_tokens,
            "calls": compressed.agent.calls,
        },
        "summarizer_share": compressed.summarizer.total / compressed.total.total,
        "summarizer_cost_share": dollars["compressed"]["summarizer"] / dollars["compressed"]["total"],
        "summarizer_tokens": compressed.summarizer.total,
        "run_tokens": compressed.total.total,
        "summarizer_calls": {strategy: report.summarizer.calls for strategy, report in usage.items()},
        "dollars": dollars,
    }


def _dollars(report: UsageReport) -> dict[str, float]:
    """The run's bill in USD: the agent's calls at the agent model's price, the summarizer's at its own."""
    config, prices = RunConfig(), PriceTable()
    agent = prices.cost(config.model, _as_usage(report.agent))
    summarizer = prices.cost(config.summarizer_model, _as_usage(report.summarizer))
    return {"agent": round(agent, 4), "summarizer": round(summarizer, 4), "total": round(agent + summarizer, 4)}


def _as_usage(totals: UsageTotals) -> TokenUsage:
    return TokenUsage(input=totals.input_tokens, output=totals.output_tokens,
                      cache_read=totals.cache_read_input_tokens, cache_write=totals.cache_creation_input_tokens)


def _usage(spec: dict[str, Any], strategy: ContextStrategy) -> UsageReport:
    measure = run_project(spec, plan=multi_turn_plan, summarizer=diligent_summarizer, context=strategy)
    if measure.exit_code != 0 or measure.usage is None:
        raise RuntimeError(f"the {strategy} run did not pass every feature: {measure.warnings}")
    return measure.usage
