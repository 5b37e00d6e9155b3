"""`--jobs N` in pieces: the shared spend pool, the journal with calls in flight at once, the
scheduler's picks, the merge queue on a real repository."""

from __future__ import annotations

import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from orchestrator.config import RunConfig
from orchestrator.llm.client import ModelClient
from orchestrator.llm.costs.reservations import SpendPool
from orchestrator.llm.costs.spend import RunSpend, Spend, SpendEntry
from orchestrator.llm.errors import LimitReached
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.state import StateStore
from tests.sdk_doubles import StreamsCreate

MODEL = "claude-sonnet-5-5"


def _message() -> SimpleNamespace:
    usage = SimpleNamespace(input_tokens=100, output_tokens=10, cache_read_input_tokens=0,
                            cache_creation_input_tokens=0)
    return SimpleNamespace(content=[{"type": "text", "text": "ok"}], usage=usage, stop_reason="end_turn")


class _HeldSDK(StreamsCreate):
    """An SDK whose calls wait until released: calls in flight at once."""

    def __init__(self) -> None:
        self.messages = self
        self.release = threading.Event()
        self.started = threading.Event()

    def create(self, **_request: Any) -> Any:
        self.started.set()
        self.release.wait(10)
        return _message()


def _request() -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 4096, "messages": [{"role": "user", "content": "hi"}]}


def test_a_call_in_flight_reserves_its_worst_case_for_every_worker() -> None:
    config = RunConfig(retry_attempts=1, max_cost=0.07).client_settings()
    run = RunSpend()
    pool = SpendPool(run)
    sdk = _HeldSDK()
    first = ModelClient(config, sdk, Spend(run, feature_id="a"), pool=pool)
    second = ModelClient(config, sdk, Spend(run, feature_id="b"), pool=pool)
    worst = first.worst_case_cost(MODEL, _request())
    assert worst < 0.07 < 2 * worst  # one call fits under the cap, two do not
    thread = threading.Thread(target=lambda: first.create(**_request()))
    thread.start()
    assert sdk.started.wait(10)
    with pytest.raises(LimitReached):  # alone, it would have fitted: the other's reservation counts
        second.create(**_request())
    sdk.release.set()
    thread.join(10)
    assert pool.reserved_usd == 0
    assert run.calls == 1 and run.cost_usd > 0
    assert first.spend.feature_cost_usd == run.cost_usd and second.spend.feature_cost_usd == 0


def test_a_stopping_pool_sends_nothing_more() -> None:
    pool = SpendPool(RunSpend())
    sdk = _HeldSDK()
    client = ModelClient(RunConfig(retry_attempts=1).client_settings(), sdk, Spend(pool.run), pool=pool)
    pool.stop()
    with pytest.raises(KeyboardInterrupt):
        client.create(**_request())
    assert not sdk.started.is_set() and pool.reserved_usd == 0


def test_calls_abandoned_in_flight_are_booked_at_their_worst_case_and_counted() -> None:
    run = RunSpend()
    pool = SpendPool(run)
    pool.hold(0.25)
    pool.hold(0.5)
    pool.hold(0.125)
    pool.release(0.125)  # answered
    assert pool.abandon_in_flight() == pytest.approx(0.75)
    assert run.snapshot().unconfirmed_cost_usd == pytest.approx(0.75) and run.snapshot().unconfirmed_calls == 2


def test_calls_of_several_workers_interleaved_in_the_journal_are_counted_once(tmp_path: Path) -> None:
    store = StateStore(ProjectPaths(tmp_path))
    for entry in (
        {"kind": "reserve", "purpose": "agent", "feature": "a", "costUsd": 1.0},
        {"kind": "reserve", "purpose": "agent", "feature": "b", "costUsd": 1.0},
        {"kind": "call", "purpose": "agent", "feature": "a", "costUsd": 0.25},
        {"kind": "call", "purpose": "agent", "feature": "b", "costUsd": 0.5},
        {"kind": "reserve", "purpose": "agent", "feature": "c", "costUsd": 2.0},  # killed in flight
        {"kind": "reserve", "purpose": "agent", "feature": "d", "costUsd": 0.5},
        {"kind": "call", "purpose": "agent", "feature": "d", "costUsd": 0.5, "unconfirmed": True},  # Ctrl-C
    ):
        store.record_spend(SpendEntry.model_validate(entry))
    state = store.load()
    assert state is not None
    assert state.totals.cost_usd == pytest.approx(3.25)
    assert state.totals.unconfirmed_cost_usd == pytest.approx(2.5) and state.totals.unconfirmed_calls == 2
    assert state.feature("a").cost_usd == pytest.approx(0.25)
    assert state.feature("b").cost_usd == pytest.approx(0.5)
    assert state.totals.api_calls == 2


