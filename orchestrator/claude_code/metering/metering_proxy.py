"""The metering proxy: Claude Code's only way to the API, with the run's caps and books on it.

One proxy per attempt, on 127.0.0.1 and a free port: attribution holds by construction (every call that reaches it
is that attempt's: its feature, its worker's `ModelClient` under `--jobs`), and a CLI left over from an ended
attempt cannot spend, its proxy being gone. About 0.1 s to start and close, 8 ms a call (`bench/metering_proxy.py`).
Contract for the Claude Code backend:

    with MeteringProxy(upstream=Upstream.from_environment(), client=session.client, models={session.model},
                       feature_id=feature.id, attempt=attempt, on_event=session.on_event) as proxy:
        env = {**cli_env, **proxy.environment()}   # ANTHROPIC_BASE_URL and a dummy ANTHROPIC_API_KEY
        ... run the CLI with env; never give it the real key ...
    proxy.raise_if_refused()                       # LimitReached (exit 3) when a cap stopped the CLI

What it does with each `POST /v1/messages`: the caps are checked and the call's worst case
reserved and journaled before anything is forwarded, exactly as the built-in loop's calls
(`CallBooks.open_call`: `--max-cost` with the pool's reservations under `--jobs`, the
per-feature token cap, `max_tokens` lowered to what the cap allows); when too little is left
the call is refused with 402 `billing_error`, which Claude Code shows and stops on without a
retry, and `refusal` keeps the `LimitReached`. Otherwise the request goes upstream with the
real credentials, the answer comes back byte for byte while its usage is read from the
events (`sse_usage`), and the call is booked (`CallBooks.close_call`): at its usage when
complete, at nothing when the API answered with an error status (passed through, so Claude
Code's own retries work; a 400 is told as
`mended_refusals` says), at its worst case when nobody knows whether it was billed (a
stream cut, an `error` event mid-answer, the CLI gone, the proxy closed). Each answered call
emits the `api_call` event the built-in loop emits (its `turn` counts the attempt's calls).
`count_tokens` is forwarded unmetered (the API does not bill it); every other path is refused.
Requests must carry the proxy's own dummy key, and be calls the run configured (`request_policy`:
its model, no server tool, no option or beta that changes the price or the reach).
Nothing of a request or its headers is logged; warnings are redacted by the event sink.
"""

from __future__ import annotations

import itertools
import json
import secrets
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import TracebackType
from typing import Literal
from urllib.parse import urlsplit

import httpx2

from orchestrator.claude_code.metering.mended_refusals import MendedRefusals
from orchestrator.claude_code.metering.provider_relay import ProviderUpstream
from orchestrator.claude_code.metering.proxy_server import HOP_BY_HOP, ProxyHandler, ProxyServer
from orchestrator.claude_code.metering.request_policy import body_refusal
from orchestrator.claude_code.metering.sse_usage import Answer, message_usage
from orchestrator.claude_code.metering.upstream import Upstream
from orchestrator.llm.call_books import CallBooks
from orchestrator.llm.costs.pricing import TokenUsage
from orchestrator.llm.errors import LimitReached, describe_error
from orchestrator.store.event_kinds import ApiCall, Notice

METERED_PATH = "/v1/messages"
FREE_PATH = "/v1/messages/count_tokens"
_MAX_REQUEST_BYTES = 32 * 1024 * 1024
_UPSTREAM_TIMEOUT = httpx2.Timeout(600.0, connect=10.0)  # Claude Code's own per-request timeout
_NOT_PASSED_ON = HOP_BY_HOP | {"x-api-key", "authorization", "accept-encoding"}
# 402 `billing_error`: Claude Code stops at once, showing it (429, 5xx: retried; 400: resent; 401/403: sign-in).
_REFUSED = 402


@dataclass
class _Call:
    """One metered call in flight: what `close_call` needs to book it."""

    number: int
    id: str  # in the journal: tells this call from the attempt's others in flight
    model: str
    worst: float
    stop_reason: str | None = None  # the answer's, once it is in
    streamed: bool = False  # the request asked for a stream


Outcome = TokenUsage | Literal["unknown"] | None


class MeteringProxy:
    """A local Messages API for one attempt's Claude Code, metered into the run's books."""

    def __init__(
        self, *, upstream: Upstream | ProviderUpstream, client: CallBooks, models: Iterable[str], feature_id: str,
        attempt: int, on_event: Callable[[ApiCall | Notice], None],
    ) -> None:
        """`models`: the models the run configured for the attempt; a call for any other is refused."""
        self.upstream = upstream
        self.models = frozenset(models)
        self.client = client
        self.feature_id = feature_id
        self.attempt = attempt
        self.on_event = on_event
        self.token = "orchestrate-proxy-" + secrets.token_urlsafe(24)  # the CLI's dummy key
        self.refusal: LimitReached | None = None
        self._numbers = itertools.count(1)
        self._money = threading.Lock()  # handler threads book into one client's spend
        self._in_flight: dict[int, _Call] = {}  # opened and not booked yet
        self._closed, self.refused_400 = False, MendedRefusals(feature_id, on_event)
        self.calls = 0  # Messages API requests received (refused ones included)
        self._http = httpx2.Client(timeout=_UPSTREAM_TIMEOUT, follow_redirects=False)
        self._server = ProxyServer(self._serve)

    # ---- lifetime -------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def environment(self) -> dict[str, str]:
        """What the CLI needs to reach the API through this proxy, and nothing secret. Its calls
        ask for the run's `max_output_tokens`, as the built-in loop's do: Claude Code's own
        default (up to 128,000) would make each call's worst case, reserved against `--max-cost`
        before it is sent, up to $3 on Opus, and leave other workers little room under `--jobs`."""
        return {"ANTHROPIC_BASE_URL": self.base_url, "ANTHROPIC_API_KEY": self.token,
                "CLAUDE_CODE_MAX_OUTPUT_TOKENS": str(self.client.settings.max_output_tokens)}

    def __enter__(self) -> MeteringProxy:
        self._server.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Stop serving; calls still in flight are booked at their worst case before this returns
        (the API may bill them), and their handlers, when they end, book nothing more."""
        self._server.stop()
        self.refused_400.settle("warning")  # no answered call came after them
        with self._money:
            self._closed = True
            stranded, self._in_flight = list(self._in_flight.values()), {}
            for call in stranded:
                self.client.close_call("agent", call.model, call.worst, "unknown", call=call.id)
        self._http.close()
        self._server.join()

    def raise_if_refused(self) -> None:
        """Raise the `LimitReached` of a call refused for a cap, if any was."""
        if self.refusal is not None:
            raise self.refusal

    # ---- one request ----------------------------------------------------------------------
    def _serve(self, handler: ProxyHandler) -> None:
        given = handler.headers.get("x-api-key") or handler.headers.get("authorization", "").removeprefix("Bearer ")
        if not secrets.compare_digest(given.strip().encode(), self.token.encode()):  # bytes: any header is comparable
            handler.send_error_json(401, "authentication_error", "orchestrate's metering proxy: not this attempt's key")
            return
        path = urlsplit(handler.path).path
        if handler.command != "POST" or path not in (METERED_PATH, FREE_PATH):
            handler.send_error_json(404, "not_found_error", f"orchestrate's metering proxy does not serve {path}")
            return
        body = handler.read_body(_MAX_REQUEST_BYTES)
        if body is None:
            handler.close_connection = True
            handler.send_error_json(413, "request_too_large", "the request has no length or is too large")
            return
        why = body_refusal(body, handler.headers.get("anthropic-beta"), self.models)
        if why is not None:
            if not self._closed:
                self.on_event(Notice(type="warning", id=self.feature_id,
                                     message=f"{self.feature_id} (Claude Code): the metering proxy refused a call: {why}"))
            handler.send_error_json(400, "invalid_request_error", f"orchestrate's metering proxy: {why}")
            return
        if path == FREE_PATH:
            self._forward(handler, body, None)
            return
        opened = self._open(handler, body)
        if opened is not None:
            self._forward(handler, *opened)

    def _open(self, handler: ProxyHandler, body: bytes) -> tuple[bytes, _Call] | None:
        """The caps checked and the worst case reserved; the body to send (max_tokens maybe lowered)."""
        try:
            request = json.loads(body)
        except ValueError:
            request = None
        if not isinstance(request, dict) or not isinstance(request.get("model"), str):
            handler.send_error_json(400, "invalid_request_error", "the body is not a Messages API request")
            return None
        fitted = ("max_tokens", "thinking")
        before = json.dumps([request.get(key) for key in fitted])
        number = self.calls = next(self._numbers)
        call_id = f"{self.attempt}.{number}"
        try:
            with self._money:
                if self._closed:
                    raise KeyboardInterrupt("the attempt is over")
                worst = self.client.open_call(request, purpose="agent", call=call_id)
                call = self._in_flight[number] = _Call(number, call_id, request["model"], worst,
                                                       streamed=request.get("stream") is True)
        except LimitReached as err:
            self.refusal = self.refusal or err
            handler.send_error_json(_REFUSED, "billing_error", f"orchestrate: {err}", [("x-should-retry", "false")])
            return None
        except KeyboardInterrupt:  # the run is stopping: nothing more is sent
            handler.send_error_json(_REFUSED, "billing_error", "orchestrate: the run is stopping",
                                    [("x-should-retry", "false")])
            return None
        if json.dumps([request.get(key) for key in fitted]) != before:
            body = json.dumps(request).encode()
        return body, call

    def _forward(self, handler: ProxyHandler, body: bytes, call: _Call | None) -> None:
        """`body` upstream with the real credentials, the answer back as it comes; the call booked."""
        outcome: Outcome = "unknown"
        try:
            if isinstance(self.upstream, ProviderUpstream):
                outcome = self._via_provider(handler, body, call)
            else:
                outcome = self._via_api(handler, body, call)
        except (httpx2.TransportError, OSError) as err:  # upstream cut, or the CLI gone: unknown
            self._warn(call, f"the call was cut off ({describe_error(err)}); counted at its worst case")
            handler.cut()
        finally:
            if call is not None:
                self._close(call, outcome)
        if handler.reply_open:  # only now: the CLI may end the attempt, and the proxy, once it has the answer
            handler.end_reply()

    def _via_api(self, handler: ProxyHandler, body: bytes, call: _Call | None) -> Outcome:
        """The Anthropic API: the request and its answer passed on byte for byte."""
        assert isinstance(self.upstream, Upstream)
        headers = {k: v for k, v in handler.headers.items() if k.lower() not in _NOT_PASSED_ON}
        headers.update(self.upstream.auth_headers(), **{"accept-encoding": "identity"})
        request = self._http.build_request("POST", self.upstream.url(handler.path), headers=headers, content=body)
        try:
            response = self._http.send(request, stream=True)
        except (httpx2.ConnectError, httpx2.ConnectTimeout) as err:
            self._warn(call, f"the API is unreachable ({describe_error(err)})")
            handler.send_error_json(503, "api_error", "orchestrate: the API is unreachable")
            return None  # nothing reached the API
        try:
            return self._relay(handler, response, call)
        finally:
            response.close()

    def _via_provider(self, handler: ProxyHandler, body: bytes, call: _Call | None) -> Outcome:
        """Bedrock or Vertex, through the run's SDK client; the answer re-serialized as the API's."""
        assert isinstance(self.upstream, ProviderUpstream)
        answer = Answer(streamed=call is not None and call.streamed)
        relayed = self.upstream.relay(handler, handler.path, body, answer.take)
        if relayed != "answered":
            self._warn(call, f"{self.upstream.provider} {'is unreachable' if relayed == 'unreachable' else 'refused the call'}"
                       " (Claude Code retries what is worth it)")
            return None
        return self._billed(call, answer)

    def _relay(self, handler: ProxyHandler, response: httpx2.Response, call: _Call | None) -> Outcome:
        """The answer passed on unchanged; what it bills: its usage, None (an error), or "unknown"."""
        handler.start_reply(response.status_code, response.headers.multi_items())
        answer = Answer(streamed=response.headers.get("content-type", "").startswith("text/event-stream"))
        for chunk in response.iter_raw():
            answer.take(chunk)
            handler.send_chunk(chunk)
        if response.status_code == 400 and call is not None and self.refused_400.hold(call.number, bytes(answer.whole)):
            return None  # Claude Code resends some refused requests itself: told once it is known whether it went on
        if response.status_code != 200:
            self._warn(call, f"the API answered {response.status_code} (Claude Code retries what is worth it)")
            return None
        return self._billed(call, answer)

    def _billed(self, call: _Call | None, answer: Answer) -> Outcome:
        """What a complete answer bills, read once from the bytes the CLI got."""
        if not answer.streamed:
            read = message_usage(bytes(answer.whole))
            if call is not None and read is not None:
                call.stop_reason = read[1]
            return read[0] if read else "unknown"
        reader = answer.reader
        if not reader.complete:
            self._warn(call, f"the answer ended without its message_stop ({reader.error_type or 'stream cut'}); "
                       "counted at its worst case")
            return "unknown"
        if call is not None:
            call.stop_reason = reader.stop_reason
        return reader.usage

    def _close(self, call: _Call, outcome: Outcome) -> None:
        with self._money:
            if self._in_flight.pop(call.number, None) is None:
                return  # booked at its worst case when the proxy closed
            cost = self.client.close_call("agent", call.model, call.worst, outcome, call=call.id)
            if not isinstance(outcome, TokenUsage):
                return
            self.refused_400.settle("note")  # answered after them: Claude Code mended the request itself
            spend = self.client.spend
            event = ApiCall(
                id=self.feature_id, feature=self.feature_id, turn=call.number, attempt=self.attempt, model=call.model,
                usage=outcome, cost_usd=round(cost, 6), stop_reason=call.stop_reason, run_tokens=spend.run.tokens.total,
                run_cost_usd=round(spend.run.cost_usd, 6),
            )
        self.on_event(event)

    def _warn(self, call: _Call | None, message: str) -> None:
        if self._closed:
            return  # the attempt is over; its CLI is gone
        where = f"{self.feature_id} (Claude Code, {f'call {call.number}' if call else 'token count'})"
        self.on_event(Notice(type="warning", message=f"{where}: {message}", id=self.feature_id))
