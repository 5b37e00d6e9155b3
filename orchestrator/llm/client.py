"""One model call, done safely: limits checked first, transient faults retried, cost booked.

Every call is streamed (`streaming.stream_message`). The SDK already retries 408/409/429/5xx
and dropped connections before an answer starts (`max_retries`). What survives those retries,
and what breaks an answer mid-stream (an `error` event, a lost connection), gets one more
bounded layer here (tenacity, exponential backoff with jitter, capped in attempts and time)
around the single call; tool execution is never retried. Authentication errors stop at once. An API that stays unreachable raises
`ApiUnavailable`, which ends the run with its state saved (exit 3).

The money of each call (caps checked first, worst case reserved and journaled, cost booked)
is `call_books.CallBooks`, which `ModelClient` is.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Unpack

import anthropic
from anthropic.types import Message
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    stop_after_delay,
    wait_random_exponential,
)
from tenacity.nap import sleep as default_sleep

from orchestrator.json_types import ApiRequest
from orchestrator.llm.call_books import CallBooks
from orchestrator.llm.client_settings import ClientSettings
from orchestrator.llm.costs.pricing import TokenUsage
from orchestrator.llm.costs.reservations import SpendPool
from orchestrator.llm.costs.spend import Spend, SpendEntry
from orchestrator.llm.endpoint.providers import native_model_id
from orchestrator.llm.endpoint.sdk import credentials_hint
from orchestrator.llm.errors import (
    ApiAuthError,
    ApiUnavailable,
    MalformedResponse,
    ModelRequestRejected,
    describe_error,
)
from orchestrator.llm.streaming import SdkClient, StreamBroken, is_transient, stream_message


@dataclass
class CallResult:
    message: Message
    usage: TokenUsage
    cost_usd: float


class ModelClient(CallBooks):
    """Makes model calls for the agent and the summarizer, within the run's limits (`CallBooks`)."""

    def __init__(
        self,
        settings: ClientSettings,
        sdk: SdkClient | None,
        spend: Spend,
        on_retry: Callable[[str], None] = lambda _m: None,
        sleep: Callable[[float], None] | None = None,
        journal: Callable[[SpendEntry], None] = lambda _entry: None,
        pool: SpendPool | None = None,
        on_output: Callable[[int], None] = lambda _tokens: None,
    ) -> None:
        super().__init__(settings, spend, on_retry=on_retry, journal=journal, pool=pool)
        self.sdk = sdk
        self._sleep = sleep
        self.on_output = on_output  # estimated output tokens of the call in flight, as they arrive

    # ---- the call -----------------------------------------------------------------------
    def create(
        self, *, purpose: str = "agent", input_tokens: int | None = None, **request: Unpack[ApiRequest]
    ) -> CallResult:
        """One Messages API call with limits, retries and accounting. Raises the classes above.
        `input_tokens`: the request's estimated size, if the caller keeps it (`affordable_max_tokens`)."""
        model = request["model"]
        worst = self.open_call(request, purpose=purpose, input_tokens=input_tokens)
        try:
            message = self._send(model, request)
        except BaseException as err:
            # An error answer from the API was not billed; a call cut off in flight may have been.
            refused = isinstance(err, (ApiAuthError, ApiUnavailable, ModelRequestRejected))
            self.close_call(purpose, model, worst, None if refused else "unknown")
            raise
        usage = TokenUsage.from_api(message.usage)
        return CallResult(message=message, usage=usage, cost_usd=self.close_call(purpose, model, worst, usage))

    def _send(self, model: str, request: ApiRequest) -> Message:
        """The call with the outer retries; the SDK's errors mapped to this module's."""
        retrying = Retrying(
            retry=retry_if_exception(is_transient),
            stop=stop_after_attempt(self.settings.retry_attempts) | stop_after_delay(self.settings.retry_deadline),
            wait=wait_random_exponential(multiplier=1, max=self.settings.retry_max_wait),
            before_sleep=self._before_sleep,
            reraise=True,
            sleep=self._sleep or default_sleep,
        )
        try:
            message = retrying(self._call_once, request)
        except (anthropic.AuthenticationError, anthropic.PermissionDeniedError) as err:
            raise ApiAuthError(
                f"the API refused the credentials ({describe_error(err)}): {credentials_hint(self.settings.provider)}"
            ) from None
        except anthropic.NotFoundError as err:
            raise ApiAuthError(
                f"model {model!r} not found ({describe_error(err)}): check --model / --escalate-model / --summarizer-model"
            ) from None
        except anthropic.APIStatusError as err:
            if is_transient(err) or err.status_code == 402:
                raise ApiUnavailable(f"the API kept failing: {describe_error(err)}") from None
            raise ModelRequestRejected(f"the API rejected the request: {describe_error(err)}") from None
        except (anthropic.APIConnectionError, MalformedResponse, anthropic.APIResponseValidationError,
                StreamBroken) as err:
            raise ApiUnavailable(f"the API is unreachable or answering badly: {describe_error(err)}") from None
        return message

    def _before_sleep(self, state: RetryCallState) -> None:
        err = state.outcome.exception() if state.outcome is not None else None
        self.on_retry(f"model call failed ({describe_error(err)}); retrying (attempt {state.attempt_number + 1})")

    def _call_once(self, request: ApiRequest) -> Message:
        # The provider's own name for the model; the books keep the name the user gave.
        sent: ApiRequest = {**request, "model": native_model_id(self.settings.provider, request["model"])}
        if self.sdk is None:  # a Claude plan: Claude Code pays through its own sign-in, nothing is sent from here
            raise RuntimeError("this client has no SDK client: it books calls that others make")
        try:
            message = stream_message(self.sdk, sent, self.on_output)
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise MalformedResponse(f"response body is not JSON: {err}") from None
        if isinstance(message, str) or not isinstance(getattr(message, "content", None), list) or getattr(
            message, "usage", None
        ) is None:
            raise MalformedResponse("response is not a message (no content list or usage)")
        return message

    def summarizer_call(self, **request: Unpack[ApiRequest]) -> Message:
        """The Context Agent's `model_call`: same kwargs as messages.create, returns the message."""
        return self.create(purpose="summarizer", **request).message

