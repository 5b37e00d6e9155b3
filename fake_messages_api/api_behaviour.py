"""One request in, one reply out: the fake API's behaviour, free of HTTP plumbing.

The order is the real service's as a client meets it: a server that is down answers
nothing; then authentication; then the injected fault, if any (a rate limit or an overload
does not care whether the request is valid); then the ``anthropic-version`` header, JSON and
request validation; then the answer, billed against the prompt cache.
"""

from __future__ import annotations

import json
import time
import traceback
from typing import TYPE_CHECKING, Any, Literal, Protocol
from urllib.parse import parse_qs, urlsplit

from fake_messages_api import cloud_providers
from fake_messages_api.api_errors import ApiError, invalid_request, new_id
from fake_messages_api.billing.ledger import RecordedRequest
from fake_messages_api.billing.prompt import prompt_blocks, prompt_tokens
from fake_messages_api.fault_replies import STREAM_FAULTS, error_reply, fault_reply
from fake_messages_api.faults import Fault
from fake_messages_api.reply import Reply, stream_reply
from fake_messages_api.request_validation.validation import validate_request
from fake_messages_api.responses import build_message, json_message
from fake_messages_api.scripted_agent import claude_code_turns
from fake_messages_api.scripted_agent import plans as plan_builders
from fake_messages_api.scripted_agent.agent_turn import agent_turn
from fake_messages_api.scripted_agent.forced_tools import forced_tool_name
from fake_messages_api.scripted_agent.summarizer import is_summarizer_request
from fake_messages_api.sse import CUT_AT, message_events
from fake_messages_api.thinking import thinking_blocks, thinking_on, validate_thinking

if TYPE_CHECKING:

    from fake_messages_api.billing.caching import PromptCache
    from fake_messages_api.billing.ledger import Ledger
    from fake_messages_api.faults import FaultPolicy
    from fake_messages_api.scripted_agent.forced_tools import ToolAnswerer
    from fake_messages_api.scripted_agent.plans import Plan
    from fake_messages_api.scripted_agent.summarizer import Summarizer


class DispatchedAPI(Protocol):
    """What dispatching reads of `server.FakeAPI` (a protocol: the server imports this module)."""

    plans: dict[str, Plan]
    default_plan: Plan
    summarizer: Summarizer
    faults: FaultPolicy | None
    retry_after: float | None
    rejected_keys: set[str]
    forbidden_keys: set[str]
    known_models: set[str] | None
    max_output_tokens: int
    cache: PromptCache
    ledger: Ledger
    down_mode: Literal["drop", "503"] | None
    latency: float
    stream_gap: float
    tool_answers: ToolAnswerer
    providers: cloud_providers.ProviderSettings

    def record_error(self, error: BaseException) -> None: ...

MESSAGES_PATH = "/v1/messages"
COUNT_TOKENS_PATH = "/v1/messages/count_tokens"
NO_FEATURE_REPLY = "There is no feature request in this conversation, so there is nothing to do."


def dispatch(fake: DispatchedAPI, method: str, target: str, headers: dict[str, str], raw: bytes) -> Reply:
    """Handle one HTTP request to the fake API."""
    try:
        body: Any = json.loads(raw) if raw else None
    except (ValueError, UnicodeDecodeError):
        body = None
    url = urlsplit(target)
    call = cloud_providers.provider_call(method, url.path, body)  # Bedrock's or Vertex's shape
    entry = fake.ledger.record(
        method=method, path=url.path, headers=headers, body=call.body if call else body, raw=raw, time=time.time(),
        provider=call.provider if call else "anthropic",
    )
    api_path = call.api_path if call else url.path
    _classify(fake, entry, api_path)
    request_id = new_id("req")
    try:
        reply = _handle(fake, entry, api_path, parse_qs(url.query), request_id, call)
    except ApiError as error:
        reply = error_reply(error, request_id, fake.retry_after)
        fake.ledger.update(entry, status=error.status, outcome=entry.outcome or f"error:{error.error_type}")
    except Exception as error:  # a test's plan or summarizer raised: make it loud, not retried
        fake.record_error(error)
        message = f"fake API: {entry.kind} handler raised {type(error).__name__}: {error}"
        traceback.print_exc()
        reply = error_reply(ApiError(500, message, headers={"x-should-retry": "false"}), request_id, fake.retry_after)
        fake.ledger.update(entry, status=500, outcome="error:handler")
    reply.headers.setdefault("request-id", request_id)
    return reply


def _classify(fake: DispatchedAPI, entry: RecordedRequest, path: str) -> None:
    """Note what kind of call this is and, for the agent, which feature and step."""
    body = entry.body
    if path == COUNT_TOKENS_PATH:
        fake.ledger.update(entry, kind="count_tokens")
    elif path == MESSAGES_PATH and isinstance(body, dict):
        if is_summarizer_request(body):
            fake.ledger.update(entry, kind="summarizer")
            return
        if forced_tool_name(body) is not None:
            fake.ledger.update(entry, kind="forced_tool")
            return
        try:
            turn = agent_turn(body)
        except Exception:  # malformed messages: validation will say why
            turn = None
        if turn is not None:
            fake.ledger.update(entry, kind="agent", feature_id=turn.feature_id, step=turn.step)
        else:
            fake.ledger.update(entry, kind="agent")


def _handle(
    fake: DispatchedAPI, entry: RecordedRequest, path: str, query: dict[str, list[str]], request_id: str,
    call: cloud_providers.ProviderCall | None = None,
) -> Reply:
    if path not in (MESSAGES_PATH, COUNT_TOKENS_PATH) or entry.method != "POST":
        raise ApiError(404, f"Not Found: {entry.method} {path}", "not_found_error")

    if fake.down_mode is not None:
        fake.ledger.update(entry, outcome="down")
        if fake.down_mode == "drop":
            return Reply(drop=True)
        raise ApiError(503, "Service unavailable.", "api_error")

    if call is None:
        _authenticate(fake, entry.headers)
    else:  # Bedrock's SigV4 signature or Vertex's bearer token
        cloud_providers.authenticate(fake.providers, call, entry.method, entry.path, entry.headers, entry.raw)

    delay = fake.latency  # a model's time, when the test or benchmark wants one
    fault = fake.faults(entry.index, entry.body) if fake.faults is not None else None
    streamed = isinstance(entry.body, dict) and entry.body.get("stream") is True
    stream_fault: Fault | None = None
    if fault is not None:
        label = str(fault.status) if fault.kind == "status" else fault.body or fault.kind
        fake.ledger.update(entry, outcome=f"fault:{label}")
        faulty = fault_reply(fault, entry.body, streamed, fake.retry_after)
        if faulty is not None:
            return faulty
        if streamed and fault.kind in STREAM_FAULTS:
            stream_fault = fault  # met once the answer is known, in the middle of its stream
        else:
            delay = fault.delay

    if call is not None:
        cloud_providers.require_version(call)  # in the body, where these providers want it
    elif not entry.headers.get("anthropic-version"):
        raise invalid_request("anthropic-version: header is required")
    if entry.body is None:
        raise invalid_request(
            "There was an error parsing the body of your request. Please ensure it is valid JSON."
        )
    body: dict[str, Any] = entry.body
    endpoint = "count_tokens" if path == COUNT_TOKENS_PATH else "messages"
    headed = [b.strip() for b in entry.headers.get("anthropic-beta", "").split(",") if b.strip()]
    betas = (call.betas or headed) if call else headed  # Bedrock's in the body, Vertex's in the header
    # Bedrock and Vertex take the beta parameters when the request names its betas.
    beta = query.get("beta") == ["true"] or (call is not None and bool(betas))
    validate_request(body, endpoint=endpoint, beta=beta, max_output_tokens=fake.max_output_tokens, betas=tuple(betas))
    validate_thinking(body, betas)
    if fake.known_models is not None and body["model"] not in fake.known_models:
        raise ApiError(404, f"model: {body['model']}", "not_found_error")

    if endpoint == "count_tokens":
        result: dict[str, Any] = {"input_tokens": prompt_tokens(body)}
        fake.ledger.update(entry, status=200, outcome=entry.outcome or "ok", response=result)
        return Reply(200, {"content-type": "application/json"}, json.dumps(result).encode(), delay=delay)

    return _message_reply(fake, entry, body, (stream_fault, call.provider if call else "anthropic", delay), streamed)


def _message_reply(
    fake: DispatchedAPI, entry: RecordedRequest, body: dict[str, Any], how: tuple[Fault | None, str, float], streamed: bool
) -> Reply:
    """The answer, billed against the prompt cache, streamed (with its fault, if any) or whole."""
    stream_fault, provider, delay = how
    blocks = _answer(fake, entry.kind, body)
    outcome = fake.cache.apply(body["model"], prompt_blocks(body))
    message = build_message(body["model"], blocks, body["max_tokens"], outcome)
    fake.ledger.bill(entry.kind, message["usage"])
    fake.ledger.update(entry, status=200, outcome=entry.outcome or "ok", response=message)
    if streamed:
        return stream_reply(message, stream_fault, provider, delay, fake.stream_gap)
    # Not streamed, the answer comes whole once the model has written all of it (`stream_gap` an event).
    delay += fake.stream_gap * len(message_events(message)) if fake.stream_gap else 0.0
    return Reply(200, {"content-type": "application/json"}, json.dumps(json_message(message)).encode(), delay=delay)


def _authenticate(fake: DispatchedAPI, headers: dict[str, str]) -> None:
    # This SDK sends the API key as `Authorization: Bearer`; the API also takes `x-api-key`.
    key = headers.get("x-api-key")
    authorization = headers.get("authorization", "")
    if not key and authorization.lower().startswith("bearer "):
        key = authorization[len("bearer "):].strip()
    if not key:
        raise ApiError(401, "x-api-key header is required", "authentication_error")
    if key in fake.rejected_keys:
        raise ApiError(401, "invalid x-api-key", "authentication_error")
    if key in fake.forbidden_keys:
        raise ApiError(
            403, "Your API key does not have permission to use the specified resource.", "permission_error"
        )


def _answer(fake: DispatchedAPI, kind: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    """The content blocks of the reply: the summarizer's JSON or the agent plan's step."""
    if kind == "summarizer":
        result = fake.summarizer(body)
        return [plan_builders.text(result if isinstance(result, str) else json.dumps(result))]
    if kind == "forced_tool":
        return _forced_tool_answer(fake, body)
    turn = agent_turn(body)
    if turn is None:
        return [plan_builders.text(NO_FEATURE_REPLY)]
    plan = fake.plans.get(turn.feature_id, fake.default_plan)
    blocks = claude_code_turns.spoken(plan_builders.play(plan, turn), body)  # Claude Code's tools when offered
    if thinking_on(body):  # the "model" thinks first; its blocks must come back unchanged
        blocks = thinking_blocks(turn.feature_id, turn.step, json.dumps(body["messages"][-1])) + blocks
    return blocks


def _forced_tool_answer(fake: DispatchedAPI, body: dict[str, Any]) -> list[dict[str, Any]]:
    """One ``tool_use`` block calling the forced tool with `fake.tool_answers`' input."""
    name = forced_tool_name(body) or ""
    answer = dict(fake.tool_answers(name, body))
    cut = answer.pop(CUT_AT, None)  # an answer cut by max_tokens after this many characters
    block = plan_builders.tool_use(name, answer)
    return [{**block, CUT_AT: cut} if isinstance(cut, int) else block]
