"""A Claude plan attempt always has a budget: `plan_attempt_budget` without `--max-cost`, or
the cap's share when smaller; reserved before it starts, so a kill -9 books it at that budget."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from orchestrator.agent_settings import DEFAULT_PLAN_ATTEMPT_BUDGET
from orchestrator.claude_code.billing import PlanAttempt
from orchestrator.config import RunConfig
from orchestrator.llm.client import ModelClient
from orchestrator.llm.costs.spend import Spend
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.state import StateStore

MODEL = "claude-opus-5-5"


def _books(root: Path, **config: float) -> tuple[ModelClient, StateStore]:
    store = StateStore(ProjectPaths.for_project(root))
    client = ModelClient(RunConfig(**config).client_settings(), None, Spend(feature_id="feat-a"),
                         journal=store.record_spend)
    return client, store


def _plan(client: ModelClient, ceiling: float = DEFAULT_PLAN_ATTEMPT_BUDGET) -> PlanAttempt:
    return PlanAttempt(client, model=MODEL, feature_id="feat-a", attempt=1, on_event=lambda _e: None, ceiling=ceiling)


def _booked(store: StateStore) -> float:
    state = store.load()
    assert state is not None
    return state.totals.cost_usd


def test_the_default_budget_is_five_dollars_and_can_be_set_but_never_off():
    assert RunConfig().plan_attempt_budget == DEFAULT_PLAN_ATTEMPT_BUDGET == 5.0
    assert RunConfig(plan_attempt_budget=0.5).plan_attempt_budget == 0.5
    for off in (0, -1, float("inf")):
        with pytest.raises(ValueError):
            RunConfig(plan_attempt_budget=off)


@pytest.mark.parametrize(("config", "ceiling", "budget"), [
    ({}, 5.0, 5.0),  # no --max-cost: the attempt's own budget
    ({"max_cost": 2.0}, 5.0, 2.0),  # the cap's share is smaller: it wins
    ({"max_cost": 20.0}, 5.0, 5.0),  # the attempt's budget is smaller: it wins
    ({"max_cost": 20.0, "jobs": 8}, 5.0, 2.5),  # one worker's share of eight
])
def test_the_budget_is_the_smaller_of_the_attempts_own_and_the_caps_share(tmp_path, config, ceiling, budget):
    client, _ = _books(tmp_path, **config)
    with _plan(client, ceiling) as plan:
        assert plan.budget == pytest.approx(budget)
        plan.record(SimpleNamespace(subtype="success", num_turns=1, total_cost_usd=0.1, usage=None))


def test_a_plan_attempt_killed_without_max_cost_is_booked_at_its_budget(tmp_path):
    client, store = _books(tmp_path)
    _plan(client, ceiling=3.0).__enter__()  # reserved, then the process dies: nothing closes it
    assert _booked(store) == pytest.approx(3.0)


def test_an_interrupted_plan_attempt_without_max_cost_is_booked_at_its_budget(tmp_path):
    client, store = _books(tmp_path)
    with pytest.raises(KeyboardInterrupt), _plan(client):
        raise KeyboardInterrupt
    assert _booked(store) == pytest.approx(DEFAULT_PLAN_ATTEMPT_BUDGET)


def test_stopping_at_the_attempts_own_budget_fails_the_attempt_but_not_the_run(tmp_path):
    client, store = _books(tmp_path, max_cost=50.0)
    with _plan(client, ceiling=1.0) as plan:
        plan.record(SimpleNamespace(subtype="error_max_budget_usd", num_turns=9, total_cost_usd=1.02, usage=None))
    plan.raise_if_capped()  # the cap is far: no LimitReached, the next attempt goes on
    assert _booked(store) == pytest.approx(1.02)


def test_the_runs_agent_gets_the_configured_budget():
    pytest.importorskip("claude_agent_sdk", reason="the claude-code extra is not installed")
    from orchestrator.claude_code.choice import agent_for

    agent = agent_for(RunConfig(agent="claude-code", plan_attempt_budget=1.25))
    assert agent.plan_attempt_budget == 1.25
