"""The last answer of an attempt is booked exactly even when the attempt ends the moment the
CLI has it: the proxy finishes the reply only once the call is booked, so closing it right
after cannot strand the call at its worst case."""

from __future__ import annotations

import time
from typing import Any

import pytest

from orchestrator.claude_code.metering.metering_proxy import MeteringProxy
from tests.e2e.claude_code.test_metering_proxy_e2e import Books, _billed, _post, _proxy, _request


@pytest.mark.parametrize("stream", [True, False])
def test_an_answer_the_client_has_is_already_booked_when_the_proxy_closes(
    fake_api: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch, stream: bool,
) -> None:
    booking = MeteringProxy._close

    def slow_booking(self: MeteringProxy, *args: Any) -> None:
        time.sleep(0.5)  # a busy machine between the answer's last byte and its booking
        booking(self, *args)

    monkeypatch.setattr(MeteringProxy, "_close", slow_booking)
    books = Books(tmp_path)
    with _proxy(fake_api, books) as proxy:
        status, _ = _post(proxy, _request(stream=stream))
    # the attempt ended (proxy closed) the moment the client had the whole answer
    assert status == 200
    state = books.replayed()
    assert state.totals.unconfirmed_cost_usd == 0 and state.totals.api_calls == 1
    assert state.totals.cost_usd == pytest.approx(_billed(fake_api)[1])
    assert len(books.kinds("api_call")) == 1
