"""The metering proxy against the packaged fake API, driven by plain streaming HTTP requests:
what it forwards, refuses, passes through, and books into the run's journal."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx2
import pytest

from fake_messages_api.faults import FailFirst, Fault
from fake_messages_api.server import FakeAPI
from orchestrator.claude_code.metering.metering_proxy import MeteringProxy
from orchestrator.claude_code.metering.upstream import Upstream
from orchestrator.config import RunConfig
from orchestrator.llm.client import ModelClient
from orchestrator.llm.costs.pricing import PriceTable, TokenUsage
from orchestrator.llm.costs.spend import Spend
from orchestrator.llm.endpoint.sdk import Credentials
from orchestrator.llm.errors import LimitReached
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.run_state import RunState
from orchestrator.store.state import StateStore

REAL_KEY = "sk-ant-real-key-of-the-run-0123456789"
MODEL = "claude-sonnet-5-5"
SYSTEM = "You are a careful engineer. " * 400  # long enough to be cached


class Books:
    """A client booking into a real state journal, and the events the proxy emitted."""

    def __init__(self, root: Path, max_cost: float | None = None) -> None:
        self.store = StateStore(ProjectPaths.for_project(root))
        self.spend = Spend(feature_id="feat-a")
        self.client = ModelClient(RunConfig(max_cost=max_cost).client_settings(), None, self.spend, journal=self.store.record_spend)
        self.events: list[tuple[str, dict[str, Any]]] = []

    def on_event(self, event: Any) -> None:
        self.events.append((event.type, event.dump()))

    def replayed(self) -> RunState:
        state = self.store.load()
        assert state is not None
        return state

    def kinds(self, kind: str) -> list[dict[str, Any]]:
        return [data for name, data in self.events if name == kind]


def _proxy(fake: FakeAPI, books: Books) -> MeteringProxy:
    upstream = Upstream(base_url=fake.base_url, credentials=Credentials(api_key=REAL_KEY))
    return MeteringProxy(upstream=upstream, client=books.client, models={MODEL}, feature_id="feat-a", attempt=1,
                         on_event=books.on_event)


def _request(max_tokens: int = 2048, **extra: Any) -> dict[str, Any]:
    system = [{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}]
    return {"model": MODEL, "max_tokens": max_tokens, "stream": True, "system": system,
            "messages": [{"role": "user", "content": "Say hello."}], **extra}


def _post(proxy: MeteringProxy, body: dict[str, Any], key: str | None = None, path: str = "/v1/messages") -> tuple[int, bytes]:
    headers = {"x-api-key": key or proxy.token, "anthropic-version": "2023-06-01"}
    with httpx2.Client(timeout=30) as http, http.stream("POST", proxy.base_url + path, json=body,
                                                         headers=headers) as response:
        return response.status_code, response.read()


def _billed(fake: FakeAPI, model: str = MODEL) -> tuple[TokenUsage, float]:
    """What the fake billed, priced independently of the proxy's books."""
    total = fake.usage.total
    usage = TokenUsage(input=total.input_tokens, output=total.output_tokens, cache_read=total.cache_read_input_tokens,
                       cache_write=total.cache_creation_input_tokens)
    return usage, PriceTable().cost(model, usage)


def _events_of(body: bytes) -> list[str]:
    return [json.loads(line[5:])["type"] for line in body.splitlines() if line.startswith(b"data:")]


def test_a_streamed_call_comes_back_whole_and_is_booked_at_exactly_what_the_api_billed(fake_api, tmp_path):
    books = Books(tmp_path)
    with _proxy(fake_api, books) as proxy:
        status, body = _post(proxy, _request())
    assert status == 200
    assert _events_of(body)[0] == "message_start" and _events_of(body)[-1] == "message_stop"
    billed, cost = _billed(fake_api)
    state = books.replayed()
    assert state.totals.tokens == billed and state.totals.cost_usd == pytest.approx(cost)
    assert state.feature("feat-a").cost_usd == pytest.approx(cost) and state.totals.api_calls == 1
    [event] = books.kinds("api_call")
    assert event["usage"] == billed.dump() and event["feature"] == "feat-a" and event["turn"] == 1
    assert event["model"] == MODEL and event["stopReason"] == "end_turn"


def test_cache_writes_and_reads_are_read_from_the_stream_and_booked(fake_api, tmp_path):
    fake_api.min_cacheable_tokens = 100
    books = Books(tmp_path)
    with _proxy(fake_api, books) as proxy:
        _post(proxy, _request())
        _post(proxy, _request())
    first, second = (TokenUsage.model_validate(e["usage"]) for e in books.kinds("api_call"))
    assert first.cache_write > 0 and second.cache_read == first.cache_write
    assert books.replayed().totals.tokens == _billed(fake_api)[0]


def test_the_real_key_goes_upstream_and_the_dummy_key_does_not(fake_api, tmp_path):
    books = Books(tmp_path)
    with _proxy(fake_api, books) as proxy:
        _post(proxy, _request())
    assert REAL_KEY not in proxy.environment().values() and proxy.token in proxy.environment().values()
    [received] = fake_api.requests
    assert received.headers["x-api-key"] == REAL_KEY
    assert proxy.token not in json.dumps(received.headers)


def test_a_call_past_the_cap_is_refused_before_anything_is_forwarded(fake_api, tmp_path):
    books = Books(tmp_path, max_cost=0.001)
    with _proxy(fake_api, books) as proxy:
        status, body = _post(proxy, _request(max_tokens=8000))
    assert status == 402 and json.loads(body)["error"]["type"] == "billing_error"
    assert "cost cap" in json.loads(body)["error"]["message"]
    assert fake_api.calls == 0
    assert isinstance(proxy.refusal, LimitReached)
    with pytest.raises(LimitReached):
        proxy.raise_if_refused()
    assert not books.store.paths.state_journal.exists()  # nothing reserved, nothing booked


def test_near_the_cap_max_tokens_is_lowered_as_the_built_in_client_does(fake_api, tmp_path):
    books = Books(tmp_path, max_cost=0.2)
    with _proxy(fake_api, books) as proxy:
        status, _ = _post(proxy, _request(max_tokens=64000))
    assert status == 200
    sent = fake_api.requests[0].body["max_tokens"]
    assert 1024 <= sent < 64000
    assert books.replayed().totals.cost_usd <= 0.2


@pytest.mark.parametrize("status", [529, 429, 500])
def test_an_error_answer_is_passed_through_and_its_reservation_released(fake_api, tmp_path, status):
    fake_api.faults = FailFirst(1, status)
    books = Books(tmp_path)
    with _proxy(fake_api, books) as proxy:
        got, body = _post(proxy, _request())
        again, _ = _post(proxy, _request())  # the CLI's own retry
    assert got == status and "error" in json.loads(body)
    assert again == 200
    state = books.replayed()
    assert state.totals.api_calls == 1 and state.totals.unconfirmed_cost_usd == 0
    assert state.totals.cost_usd == pytest.approx(_billed(fake_api)[1])


@pytest.mark.parametrize("fault", [Fault.stream_drop(after_events=4), Fault.stream_error(after_events=4)])
def test_a_stream_cut_or_broken_midway_counts_at_its_worst_case(fake_api, tmp_path, fault):
    fake_api.faults = FailFirst(1, fault)
    books = Books(tmp_path)
    with _proxy(fake_api, books) as proxy, (
            pytest.raises(httpx2.TransportError) if fault.kind == "stream_drop" else _nothing()):
        _post(proxy, _request())
    state = books.replayed()
    assert state.totals.unconfirmed_cost_usd > 0
    assert state.totals.cost_usd >= _billed(fake_api)[1]
    assert books.kinds("api_call") == [] and books.kinds("warning")


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *_exc: object) -> None:
        return None


def test_calls_in_flight_at_once_are_each_booked_exactly(fake_api, tmp_path):
    fake_api.latency = 0.3  # both calls are in flight together
    books = Books(tmp_path)
    with _proxy(fake_api, books) as proxy:
        threads = [threading.Thread(target=_post, args=(proxy, _request())) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    state = books.replayed()
    assert state.totals.api_calls == 3 and state.totals.unconfirmed_cost_usd == 0
    assert state.totals.cost_usd == pytest.approx(_billed(fake_api)[1])
    assert sorted(e["turn"] for e in books.kinds("api_call")) == [1, 2, 3]


def test_a_request_without_this_attempts_key_or_off_the_messages_api_is_refused(fake_api, tmp_path):
    books = Books(tmp_path)
    with _proxy(fake_api, books) as proxy:
        assert _post(proxy, _request(), key=REAL_KEY)[0] == 401
        assert _post(proxy, _request(), path="/v1/files")[0] == 404
        status, body = _post(proxy, {"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}, path="/v1/messages/count_tokens")
    assert status == 200 and "input_tokens" in json.loads(body)
    assert [r.path for r in fake_api.requests] == ["/v1/messages/count_tokens"]
    assert not books.store.paths.state_journal.exists()


def test_closing_the_proxy_mid_answer_ends_the_call_at_once_and_books_its_worst_case(fake_api, tmp_path):
    fake_api.faults = FailFirst(1, Fault.slow_stream(gap=30.0))
    books = Books(tmp_path)
    proxy = _proxy(fake_api, books).__enter__()

    def call() -> None:
        with pytest.raises(httpx2.TransportError):
            _post(proxy, _request())

    caller = threading.Thread(target=call)
    caller.start()
    while not fake_api.requests:
        threading.Event().wait(0.02)
    threading.Event().wait(0.3)
    proxy.close()
    caller.join(10)
    assert not caller.is_alive()
    state = books.replayed()
    assert state.totals.unconfirmed_cost_usd > 0 and state.totals.cost_usd >= _billed(fake_api)[1]


def test_a_proxy_killed_mid_answer_never_records_less_than_the_api_billed(fake_api, tmp_path):
    """kill -9 of the process that runs the proxy while an answer streams through it: the
    journal's open reservation counts at the call's worst case, at least what the fake billed."""
    fake_api.faults = FailFirst(1, Fault.slow_stream(gap=0.5))
    env = {**os.environ, "ANTHROPIC_BASE_URL": fake_api.base_url, "ANTHROPIC_API_KEY": REAL_KEY}
    child = subprocess.Popen([sys.executable, "-m", "tests.metering_proxy_child", str(tmp_path)], env=env,
                             stdout=subprocess.PIPE, text=True)
    try:
        base_url, token = child.stdout.readline().split() if child.stdout else ("", "")
        headers = {"x-api-key": token, "anthropic-version": "2023-06-01"}
        with httpx2.Client(timeout=30) as http, http.stream("POST", base_url + "/v1/messages", json=_request(),
                                                             headers=headers) as response:
            first = next(response.iter_raw())
            assert b"message_start" in first  # the API has begun answering: it bills this call
            child.send_signal(signal.SIGKILL)
            child.wait(10)
    finally:
        child.kill()
    state = StateStore(ProjectPaths.for_project(tmp_path)).load()
    billed = _billed(fake_api)[1]
    assert state is not None and state.totals.cost_usd >= billed > 0
    assert state.totals.unconfirmed_cost_usd == state.totals.cost_usd


def test_an_answer_that_is_not_streamed_is_booked_from_its_body(fake_api, tmp_path):
    books = Books(tmp_path)
    with _proxy(fake_api, books) as proxy:
        status, body = _post(proxy, _request(stream=False))
    assert status == 200 and json.loads(body)["type"] == "message"
    state = books.replayed()
    assert state.totals.tokens == _billed(fake_api)[0] and state.totals.api_calls == 1


def test_a_key_that_is_not_ascii_is_refused_like_any_wrong_key(fake_api, tmp_path):
    books = Books(tmp_path)
    with _proxy(fake_api, books) as proxy, httpx2.Client(timeout=10) as http:
        headers = [(b"x-api-key", "clé".encode()), (b"anthropic-version", b"2023-06-01")]
        response = http.post(proxy.base_url + "/v1/messages", json=_request(), headers=headers)
    assert response.status_code == 401 and fake_api.calls == 0


def _with_system_turn() -> dict[str, Any]:
    """A request the fake (as the API) refuses without the beta that allows `system`-role turns."""
    body = _request()
    body["messages"] = [*body["messages"], {"role": "system", "content": [{"type": "text", "text": "# Environment"}]}]
    return body


def test_a_400_claude_code_mends_by_resending_is_a_note_not_a_warning(fake_api, tmp_path):
    books = Books(tmp_path)
    with _proxy(fake_api, books) as proxy:
        refused, _ = _post(proxy, _with_system_turn())
        resent, _ = _post(proxy, _request())  # what Claude Code does: the same call without the system turn

    assert (refused, resent) == (400, 200)
    assert books.kinds("warning") == []
    (note,) = books.kinds("note")
    assert note["message"].startswith("feat-a (Claude Code, call 1): the API answered 400 (messages.1.role:")
    assert "went on" in note["message"]


def test_a_400_the_attempt_ends_on_is_a_warning(fake_api, tmp_path):
    books = Books(tmp_path)
    with _proxy(fake_api, books) as proxy:
        refused, _ = _post(proxy, _with_system_turn())

    assert refused == 400 and books.kinds("note") == []
    (warning,) = books.kinds("warning")
    assert "the API answered 400 (messages.1.role:" in warning["message"]
