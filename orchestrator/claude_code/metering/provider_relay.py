"""Claude Code's calls on Amazon Bedrock or Google Vertex AI: sent by the run's own SDK client.

Claude Code talks the Anthropic Messages API to the metering proxy, as with an API key. For
`--provider bedrock|vertex` the proxy does not pass the bytes on: it sends the request through
the run's own `AnthropicBedrock` / `AnthropicVertex` (the one the built-in loop uses, built by
`llm.sdk.make_sdk_client` from the run's environment), so the signing (AWS Signature V4, a
Google token), the provider's paths and framing (Bedrock's AWS event-stream) and the
credentials are the SDK's, in this process; the CLI never holds any of them. The model is
renamed to the provider's id (`llm.providers.native_model_id`). The answer is written back as
the Anthropic API writes it: a streamed one as server-sent events, each serialized from the
SDK's decoded event (`sse_event`), a whole one as its JSON, an error as the API's error JSON
with the provider's status. The proxy reads the usage from exactly those bytes, as it reads the
Anthropic API's. The SDK's own retries are off here: Claude Code retries what is worth it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

import anthropic
from anthropic.types.beta import BetaMessage, BetaMessageTokensCount, BetaRawMessageStreamEvent

from orchestrator.claude_code.metering.proxy_server import ProxyHandler
from orchestrator.llm.endpoint.providers import UnknownModelMapping, native_model_id
from orchestrator.llm.streaming import SdkClient

# Claude Code's own per-request timeout; the run's `--api-timeout` is for the built-in loop's calls.
_TIMEOUT = 600.0
# The request headers that mean something to the provider (Bedrock moves the betas into the body).
_PASSED_ON = ("anthropic-beta",)
Relayed = Literal["answered", "refused", "unreachable"]


def sse_event(event: BetaRawMessageStreamEvent) -> bytes:
    """One decoded stream event as the Anthropic API sends it: `event: TYPE` and its JSON `data`."""
    data = json.dumps(event.to_dict(mode="json"), separators=(",", ":"))
    return f"event: {event.type}\ndata: {data}\n\n".encode()


def error_event(error_type: str, message: str) -> bytes:
    """The API's `error` event, for an answer the provider broke off after it began."""
    data = json.dumps({"type": "error", "error": {"type": error_type, "message": message}})
    return f"event: error\ndata: {data}\n\n".encode()


@dataclass(frozen=True)
class ProviderUpstream:
    """Bedrock or Vertex, through the run's SDK client for it (its credentials never in a repr)."""

    provider: str  # "bedrock" | "vertex"
    sdk: SdkClient = field(repr=False)

    @classmethod
    def of(cls, provider: str, sdk: SdkClient) -> ProviderUpstream:
        """The run's client without retries of its own, and with Claude Code's timeout."""
        return cls(provider, sdk.with_options(max_retries=0, timeout=_TIMEOUT))

    def relay(self, handler: ProxyHandler, path: str, body: bytes, on_bytes: Callable[[bytes], None]) -> Relayed:
        """Send one request (`path` as the CLI asked: `/v1/messages?beta=true`, count_tokens) and
        write its answer to `handler`, each byte of it also to `on_bytes`. "refused": the provider
        answered with an error status (written back, billed nothing); "unreachable": nothing
        reached it. A stream cut or a connection lost mid-answer raises (httpx2 or OSError)."""
        request = json.loads(body)
        try:
            request["model"] = native_model_id(self.provider, request["model"])
        except UnknownModelMapping as err:
            handler.send_error_json(400, "invalid_request_error", f"orchestrate: {err}")
            return "refused"
        headers = {name: value for name in _PASSED_ON if (value := handler.headers.get(name))}
        streamed = request.get("stream") is True
        counted = urlsplit(path).path.endswith("/count_tokens")
        try:
            answer: Any = self.sdk.post(path, cast_to=BetaMessageTokensCount if counted else BetaMessage, body=request, options={"headers": headers},
                                        stream=streamed, stream_cls=anthropic.Stream[BetaRawMessageStreamEvent])
        except anthropic.APIStatusError as err:
            _send_status_error(handler, err)
            return "refused"
        except anthropic.APITimeoutError:
            raise TimeoutError("the provider did not answer in time") from None
        except anthropic.APIConnectionError:
            handler.send_error_json(503, "api_error", f"orchestrate: {self.provider} is unreachable")
            return "unreachable"
        except anthropic.AnthropicError as err:  # what the SDK will not send there (Bedrock's count_tokens)
            handler.send_error_json(404, "not_found_error", f"orchestrate: {self.provider}: {err}")
            return "refused"
        if not streamed:
            whole = answer.to_json(indent=None).encode()
            on_bytes(whole)
            handler.start_reply(200, [("content-type", "application/json")])
            handler.send_chunk(whole)
            return "answered"  # the proxy ends the reply once the call is booked
        _stream_back(handler, answer, on_bytes)
        return "answered"


def _stream_back(handler: ProxyHandler, stream: anthropic.Stream[BetaRawMessageStreamEvent],
                 on_bytes: Callable[[bytes], None]) -> None:
    handler.start_reply(200, [("content-type", "text/event-stream"), ("cache-control", "no-cache")])
    try:
        for event in stream:
            data = sse_event(event)
            on_bytes(data)
            handler.send_chunk(data)
    except anthropic.APIStatusError as err:  # an `error` event mid-answer: passed on as the API sends it
        data = error_event(_error_of(err)[0], err.message)
        on_bytes(data)
        handler.send_chunk(data)
    finally:
        stream.close()


def _send_status_error(handler: ProxyHandler, err: anthropic.APIStatusError) -> None:
    """The provider's error status with the API's error JSON (the provider's own type when it gave one)."""
    kind, message = _error_of(err)
    retry = err.response.headers.get("x-should-retry")
    handler.send_error_json(err.status_code, kind, str(message or err.message), [("x-should-retry", retry)] if retry else [])


def _error_of(err: anthropic.APIStatusError) -> tuple[str, object]:
    """The error's type as the provider named it ("api_error" when it did not) and its message, if any."""
    error = err.body.get("error") if isinstance(err.body, dict) else None
    if not isinstance(error, dict):
        return "api_error", None
    return (str(error["type"]) if error.get("type") else "api_error"), error.get("message")
