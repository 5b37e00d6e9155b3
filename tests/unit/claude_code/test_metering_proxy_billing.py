"""Who pays for Claude Code (an API key, metered; or the user's Claude plan, capped per attempt),
and what a plan attempt books: its budget before, the cost Claude Code reports after."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from orchestrator.claude_code.billing import PlanAttempt, billing_mode, describe_billing, makes_own_calls
from orchestrator.config import ConfigError, RunConfig
from orchestrator.llm.client import ModelClient
from orchestrator.llm.costs.spend import Spend
from orchestrator.llm.errors import LimitReached
from tests.e2e.claude_code.test_metering_proxy_e2e import Books

MODEL = "claude-opus-5-5"


def _result(cost: float | None, subtype: str = "success") -> SimpleNamespace:
    usage = {"input_tokens": 10, "output_tokens": 200, "cache_read_input_tokens": 3000,
             "cache_creation_input_tokens": 17000}
    return SimpleNamespace(subtype=subtype, num_turns=4, total_cost_usd=cost, usage=usage)


def _plan(books: Books, attempt: int = 1) -> PlanAttempt:
    return PlanAttempt(books.client, model=MODEL, feature_id="feat-a", attempt=attempt, on_event=books.on_event)


def test_a_key_means_metered_billing_and_no_key_means_the_users_claude_plan():
    assert billing_mode("anthropic", {"ANTHROPIC_API_KEY": "sk-ant-x"}) == "api-key"
    assert billing_mode("anthropic", {"ANTHROPIC_AUTH_TOKEN": "t"}) == "api-key"
    assert billing_mode("anthropic", {}) == "claude-plan"
    assert "per attempt, not per call" in describe_billing("claude-plan", 2.0)
    assert "each attempt at most $3.00" in describe_billing("claude-plan", None, attempt_budget=3.0)
    assert "before every call" in describe_billing("api-key", 2.0)
    assert makes_own_calls("builtin", "anthropic", {}) and makes_own_calls("claude-code", "anthropic", {"ANTHROPIC_API_KEY": "k"})
    assert not makes_own_calls("claude-code", "anthropic", {})  # on a plan: no client of our own, no key needed


def test_bedrock_and_vertex_are_metered_and_claude_codes_own_cloud_switch_asks_for_the_provider():
    assert billing_mode("bedrock", {}) == "api-key" and billing_mode("vertex", {}) == "api-key"
    assert makes_own_calls("claude-code", "vertex", {})  # the proxy sends through the run's own SDK client
    assert billing_mode("bedrock", {"CLAUDE_CODE_USE_BEDROCK": "1"}) == "api-key"
    assert describe_billing("api-key", 2.0, "bedrock").startswith("Amazon Bedrock (your AWS account), metered")
    with pytest.raises(ConfigError, match="CLAUDE_CODE_USE_VERTEX is set: run with --provider vertex"):
        billing_mode("anthropic", {"CLAUDE_CODE_USE_VERTEX": "1"})


def test_a_plan_attempt_books_the_cost_claude_code_reports(tmp_path):
    books = Books(tmp_path, max_cost=1.0)
    with _plan(books) as plan:
        assert plan.budget == pytest.approx(1.0)
        plan.record(_result(0.31))
    plan.raise_if_capped()  # finished within its budget: the run goes on
    state = books.replayed()
    assert state.totals.cost_usd == pytest.approx(0.31) and state.feature("feat-a").cost_usd == pytest.approx(0.31)
    assert state.totals.api_calls == 1 and state.totals.unconfirmed_cost_usd == 0
    assert state.totals.tokens.cache_write == 17000 and state.totals.tokens.output == 200
    [event] = books.kinds("api_call")
    assert event["costUsd"] == 0.31 and event["turn"] == 4 and event["runCostUsd"] == 0.31


def test_a_plan_attempt_that_never_reports_counts_at_its_whole_budget(tmp_path):
    books = Books(tmp_path, max_cost=0.5)
    with pytest.raises(KeyboardInterrupt), _plan(books):
        raise KeyboardInterrupt  # Ctrl-C mid-session: Claude Code may have spent all of it
    state = books.replayed()
    assert state.totals.cost_usd == pytest.approx(0.5) == state.totals.unconfirmed_cost_usd


def test_a_killed_plan_attempt_counts_at_its_budget_when_the_journal_is_read(tmp_path):
    books = Books(tmp_path, max_cost=0.5)
    _plan(books).__enter__()  # reserved, then the process dies: nothing closes it
    assert books.replayed().totals.cost_usd == pytest.approx(0.5)


def test_budgets_share_what_the_cap_leaves_and_none_is_given_past_it(tmp_path):
    books = Books(tmp_path, max_cost=1.0)
    with _plan(books) as plan:
        plan.record(_result(0.995))  # less than a cent left
    with pytest.raises(LimitReached, match="cost cap"), _plan(books, attempt=2):
        pass
    jobs = ModelClient(RunConfig(max_cost=1.0, jobs=4).client_settings(), None, Spend(feature_id="feat-b"))
    with PlanAttempt(jobs, model=MODEL, feature_id="feat-b", attempt=1, on_event=books.on_event) as shared:
        assert shared.budget == pytest.approx(0.25)  # one worker of four takes a quarter of what is left


def test_a_session_stopped_by_its_budget_stops_the_run_at_the_cap(tmp_path):
    books = Books(tmp_path, max_cost=0.2)
    with _plan(books) as plan:
        plan.record(_result(0.23, subtype="error_max_budget_usd"))
    with pytest.raises(LimitReached, match="cost cap"):
        plan.raise_if_capped()
    assert books.replayed().totals.cost_usd == pytest.approx(0.23)  # what Claude Code reports, past its budget


def test_the_runs_first_line_says_who_pays():
    from orchestrator.commands.rendering.output import describe
    from orchestrator.store.event_kinds import RunStarted

    started = dict(type="run_started", ts=0, run_id="r", spec="s", project="p", selected=1, already_passed=0,
                   model="m", context="compressed")
    line = describe(RunStarted(**started, billing=describe_billing("claude-plan", 1.0)))
    assert line is not None and line.endswith("billing: " + describe_billing("claude-plan", 1.0))
    assert "billing" not in (describe(RunStarted(**started)) or "")
