"""One model call, done safely: limits checked first, transient faults retried, cost booked.

Every call is streamed (`streaming.stream_message`). The SDK already retries 408/409/429/5xx
and dropped connections before an answer starts (`max_retries`). What survives those retries,
and what breaks an answer mid-stream (an `error` event, a lost connection), gets one more
bounded layer here (tenacity, exponential backoff with jitter, capped in attempts and time)
around the single call; tool execution is never retried. Authentication errors stop at once. An API that stays unreachable raises
`ApiUnavailable`, which ends the run with its state saved (exit 3).

Every call is journaled as it happens (`journal`): its worst case before it is sent, its
usage as soon as its answer arrives. A call cut off by an interrupt counts at its worst case
(`Spend.unconfirmed_cost_usd`): the API may have billed it. With `--jobs N`, workers' clients
share one `SpendPool` (`reservations`), where each call reserves its worst case before it is sent.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anthropic
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    stop_after_delay,
    wait_random_exponential,
)
from tenacity.nap import sleep as default_sleep

from context_agent.tokens import estimate_json_tokens
from orchestrator.config import RunConfig
from orchestrator.json_types import ApiRequest
from orchestrator.llm.attempt_model import fit_thinking_budget
from orchestrator.llm.errors import ApiAuthError, ApiUnavailable, LimitReached, MalformedResponse, ModelRequestRejected
from orchestrator.llm.pricing import PriceTable, TokenUsage, usd
from orchestrator.llm.providers import native_model_id
from orchestrator.llm.reservations import SpendPool
from orchestrator.llm.sdk import credentials_hint, make_sdk_client
from orchestrator.llm.spend import ModelSpend, Spend, SpendEntry
from orchestrator.llm.streaming import StreamBroken, is_transient, stream_message
from orchestrator.llm.tool_overhead import tool_overhead_tokens
from orchestrator.safety.redaction import redact

__all__ = [
    "ApiAuthError", "ApiUnavailable", "CallResult", "LimitReached", "MalformedResponse", "ModelClient",
    "ModelRequestRejected", "ModelSpend", "Spend", "SpendEntry", "make_sdk_client", "request_tokens",
]

# Estimates of input size err high, but not always enough: keep a margin on top.
_INPUT_MARGIN = 1.25
_MIN_OUTPUT_TOKENS = 1024

# A Messages API request (model, max_tokens, system, tools, messages, ...) as the SDK takes it:
# JSON whose shape is the API's, free-form here.


@dataclass
class CallResult:
    message: Any
    usage: TokenUsage
    cost_usd: float


class ModelClient:
    """Makes model calls for the agent and the summarizer, within the run's limits."""

    def __init__(
        self,
        config: RunConfig,
        sdk: Any,
        spend: Spend,
        on_retry: Callable[[str], None] = lambda _m: None,
        sleep: Callable[[float], None] | None = None,
        journal: Callable[[SpendEntry], None] = lambda _entry: None,
        pool: SpendPool | None = None,
        on_output: Callable[[int], None] = lambda _tokens: None,
    ) -> None:
        self.config = config
        self.sdk = sdk
        self.spend = spend
        self.pool = pool
        self.run_spend: Spend = pool.run if pool is not None else spend  # type: ignore[assignment]
        self.prices: PriceTable = config.price_table()
        self.on_retry = on_retry
        self._sleep = sleep
        self.journal = journal
        self.on_output = on_output  # estimated output tokens of the call in flight, as they arrive

    # ---- limits -------------------------------------------------------------------------
    def affordable_max_tokens(
        self, model: str, request: ApiRequest, *, feature_cap: bool, input_tokens: int | None = None
    ) -> int:
        """The largest max_tokens this call may use without passing a cap; LimitReached if too small.

        `input_tokens` is the request's estimated size when the caller keeps it up to date
        (the agent loop does, message by message); otherwise the whole request is measured.
        """
        wanted = int(request.get("max_tokens", self.config.max_output_tokens))
        input_estimate = self._input_estimate(request, input_tokens)
        allowed = wanted
        if self.config.max_cost is not None:
            price = self.prices.price_for(model)
            worst_input_cost = input_estimate * max(price.input, price.cache_write) / 1_000_000
            committed = self.run_spend.run_cost_usd + (self.pool.reserved_usd if self.pool is not None else 0.0)
            remaining = self.config.max_cost - committed - worst_input_cost
            allowed = min(allowed, int(remaining * 1_000_000 / price.output) if remaining > 0 else 0)
            if allowed < min(_MIN_OUTPUT_TOKENS, wanted):
                raise LimitReached(
                    f"cost cap {usd(self.config.max_cost)} reached: ${committed:.4f} spent or reserved and the next "
                    f"call could cost up to ${worst_input_cost + wanted * price.output / 1_000_000:.4f} "
                    "(raise --max-cost and run again to resume)"
                )
        if feature_cap:
            remaining_tokens = self.config.max_feature_tokens - self.spend.feature_tokens.total - input_estimate
            allowed = min(allowed, int(remaining_tokens))
            if allowed < min(_MIN_OUTPUT_TOKENS, wanted):
                raise LimitReached(
                    f"per-feature token cap {self.config.max_feature_tokens:,} reached "
                    f"({self.spend.feature_tokens.total:,} used; raise max_feature_tokens and run again to resume)"
                )
        return allowed

    def worst_case_cost(self, model: str, request: ApiRequest, input_tokens: int | None = None) -> float:
        """The most this request can cost: every input token at the dearer of input and cache
        write, and all of `max_tokens` as output."""
        price = self.prices.price_for(model)
        input_cost = self._input_estimate(request, input_tokens) * max(price.input, price.cache_write)
        return (input_cost + int(request.get("max_tokens", 0)) * price.output) / 1_000_000

    @staticmethod
    def _input_estimate(request: ApiRequest, input_tokens: int | None) -> float:
        return (request_tokens(request) if input_tokens is None else input_tokens) * _INPUT_MARGIN

    # ---- the call -----------------------------------------------------------------------
    def create(self, *, purpose: str = "agent", input_tokens: int | None = None, **request: Any) -> CallResult:
        """One Messages API call with limits, retries and accounting. Raises the classes above.

        `input_tokens`: the request's estimated size, if the caller keeps it (see
        `affordable_max_tokens`). The call is journaled before it is sent and when it is answered.
        """
        model = request["model"]
        if input_tokens is None:
            input_tokens = request_tokens(request)
        with self._money():
            if self.pool is not None:
                self.pool.raise_if_stopped()  # the run is stopping: send nothing more
            request["max_tokens"] = self.affordable_max_tokens(
                model, request, feature_cap=purpose == "agent", input_tokens=input_tokens
            )
            dropped = fit_thinking_budget(request, request["max_tokens"])
            if dropped:
                self.on_retry(dropped)  # the run's warning line
            worst = self.worst_case_cost(model, request, input_tokens)
            if self.pool is not None:  # checked and reserved at once: no other worker slips in between
                self.pool.hold(worst)
            self._journal(SpendEntry(kind="reserve", purpose=purpose, cost_usd=worst, model=model))
        try:
            message = self._send(model, request)
        except BaseException as err:
            with self._money():
                self._release(worst)
                if isinstance(err, (ApiAuthError, ApiUnavailable, ModelRequestRejected)):
                    # The API answered with an error: nothing billed.
                    self._journal(SpendEntry(kind="release", purpose=purpose))
                else:  # interrupted while the call was in flight: the API may have billed it
                    self._book_unconfirmed(purpose, worst, model)
            raise
        with self._money():
            self._release(worst)
            return self._book(model, message, purpose)

    def _money(self) -> contextlib.AbstractContextManager[object]:  # the pool's lock; a lone client holds none
        return self.pool.lock if self.pool is not None else contextlib.nullcontext()

    def _release(self, worst: float) -> None:
        if self.pool is not None:
            self.pool.release(worst)

    def _send(self, model: str, request: ApiRequest) -> Any:
        """The call with the outer retries; the SDK's errors mapped to this module's."""
        retrying = Retrying(
            retry=retry_if_exception(is_transient),
            stop=stop_after_attempt(self.config.retry_attempts) | stop_after_delay(self.config.retry_deadline),
            wait=wait_random_exponential(multiplier=1, max=self.config.retry_max_wait),
            before_sleep=self._before_sleep,
            reraise=True,
            sleep=self._sleep or default_sleep,
        )
        try:
            message = retrying(self._call_once, request)
        except (anthropic.AuthenticationError, anthropic.PermissionDeniedError) as err:
            raise ApiAuthError(
                f"the API refused the credentials ({_describe(err)}): {credentials_hint(self.config.provider)}"
            ) from None
        except anthropic.NotFoundError as err:
            raise ApiAuthError(
                f"model {model!r} not found ({_describe(err)}): check --model / --escalate-model / --summarizer-model"
            ) from None
        except anthropic.APIStatusError as err:
            if is_transient(err) or err.status_code == 402:
                raise ApiUnavailable(f"the API kept failing: {_describe(err)}") from None
            raise ModelRequestRejected(f"the API rejected the request: {_describe(err)}") from None
        except (anthropic.APIConnectionError, MalformedResponse, anthropic.APIResponseValidationError,
                StreamBroken) as err:
            raise ApiUnavailable(f"the API is unreachable or answering badly: {_describe(err)}") from None
        return message

    def _before_sleep(self, state: RetryCallState) -> None:
        err = state.outcome.exception() if state.outcome is not None else None
        self.on_retry(f"model call failed ({_describe(err)}); retrying (attempt {state.attempt_number + 1})")

    def _call_once(self, request: ApiRequest) -> Any:
        # The provider's own name for the model; the books keep the name the user gave.
        sent = {**request, "model": native_model_id(self.config.provider, request["model"])}
        try:
            message = stream_message(self.sdk, sent, self.on_output)
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise MalformedResponse(f"response body is not JSON: {err}") from None
        if isinstance(message, str) or not isinstance(getattr(message, "content", None), list) or getattr(
            message, "usage", None
        ) is None:
            raise MalformedResponse("response is not a message (no content list or usage)")
        return message

    def _book(self, model: str, message: Any, purpose: str) -> CallResult:
        usage = TokenUsage.from_api(message.usage)
        cost = self.prices.cost(model, usage)
        if self.pool is not None and self.pool.closed:  # the run gave up on this call and booked its worst case
            return CallResult(message=message, usage=usage, cost_usd=cost)
        spend, run = self.spend, self.run_spend
        run.calls += 1
        run.run_tokens = run.run_tokens + usage
        run.run_cost_usd += cost
        run.book_model(model, usage, cost)
        self._mirror_run()
        if purpose == "agent":
            spend.feature_tokens = spend.feature_tokens + usage
            spend.feature_cost_usd += cost
        else:
            spend.summarizer_tokens = spend.summarizer_tokens + usage
            spend.summarizer_cost_usd += cost
        self._journal(SpendEntry(kind="call", purpose=purpose, cost_usd=cost, usage=usage, model=model))
        return CallResult(message=message, usage=usage, cost_usd=cost)

    def _book_unconfirmed(self, purpose: str, worst: float, model: str) -> None:
        if self.pool is not None and self.pool.closed:
            return
        spend, run = self.spend, self.run_spend
        run.run_cost_usd += worst
        run.unconfirmed_cost_usd += worst
        self._mirror_run()
        if purpose == "agent":
            spend.feature_cost_usd += worst
        else:
            spend.summarizer_cost_usd += worst
        try:
            self._journal(SpendEntry(kind="call", purpose=purpose, cost_usd=worst, unconfirmed=True, model=model))
        except OSError:
            pass  # the open reservation counts as the same worst case when the journal is loaded

    def _mirror_run(self) -> None:
        """A worker's own spend shows the run's totals too (the live view reads them from it)."""
        run, spend = self.run_spend, self.spend
        if run is not spend:
            spend.run_tokens, spend.run_cost_usd, spend.calls = run.run_tokens, run.run_cost_usd, run.calls

    def _journal(self, entry: SpendEntry) -> None:
        entry.feature = self.spend.feature_id if entry.purpose == "agent" else None
        self.journal(entry)

    def summarizer_call(self, **request: Any) -> Any:
        """The Context Agent's `model_call`: same kwargs as messages.create, returns the message."""
        return self.create(purpose="summarizer", **request).message


def request_tokens(request: ApiRequest) -> int:
    """Estimated input tokens of a whole request, measured from scratch, with what the API adds for its tools."""
    measured = estimate_json_tokens({k: request.get(k) for k in ("system", "tools", "messages", "output_config")})
    return measured + tool_overhead_tokens(request.get("tools"), request.get("tool_choice"))


def _describe(err: BaseException | None) -> str:
    if err is None:
        return "unknown error"
    status = getattr(err, "status_code", None)
    api_message = getattr(err, "api_message", None)  # the API's own words, without the JSON around them
    if isinstance(api_message, str) and api_message:
        kind = getattr(err, "type", None) or type(err).__name__
        where = "mid-stream" if status == 200 else str(status)
        return f"{kind} {where}: {redact(api_message).splitlines()[0][:300]}"
    text = redact(str(err)).splitlines()[0] if str(err) else type(err).__name__
    text = text[:300]
    return f"{type(err).__name__} {status}: {text}" if status else f"{type(err).__name__}: {text}"
