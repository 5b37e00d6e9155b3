"""One model call, done safely: limits checked first, transient faults retried, cost booked.

The SDK already retries 408/409/429/5xx and dropped connections (`max_retries`). What
survives those retries gets one more bounded layer here (tenacity, exponential backoff with
jitter, capped in attempts and time) around the single call; tool execution is never
retried. Authentication errors stop at once. An API that stays unreachable raises
`ApiUnavailable`, which ends the run with its state saved (exit 3).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Callable

import anthropic
from tenacity import Retrying, retry_if_exception, stop_after_attempt, stop_after_delay, wait_random_exponential

from context_agent.tokens import estimate_json_tokens
from orchestrator.config import ConfigError, RunConfig
from orchestrator.secrets import redact
from orchestrator.usage import PriceTable, TokenUsage

# Estimates of input size err high, but not always enough: keep a margin on top.
_INPUT_MARGIN = 1.25
_MIN_OUTPUT_TOKENS = 1024


class LimitReached(Exception):
    """A cost or token cap would be passed by the next call (exit 3, resumable)."""


class ApiUnavailable(Exception):
    """The API kept failing after every retry (exit 3, resumable)."""


class ApiAuthError(Exception):
    """The key was refused, or the model does not exist (exit 2)."""


class ModelRequestRejected(Exception):
    """The API refused this request (400-class): the attempt fails, the run goes on."""


class MalformedResponse(Exception):
    """The API answered 200 with something that is not a message."""


def api_credentials(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The key or token from the environment; ConfigError with instructions when absent."""
    env = os.environ if environ is None else environ
    if env.get("ANTHROPIC_API_KEY"):
        return {"api_key": env["ANTHROPIC_API_KEY"]}
    if env.get("ANTHROPIC_AUTH_TOKEN"):
        return {"auth_token": env["ANTHROPIC_AUTH_TOKEN"]}
    raise ConfigError(
        "no API key: set ANTHROPIC_API_KEY (export ANTHROPIC_API_KEY=sk-ant-...) or ANTHROPIC_AUTH_TOKEN; "
        "--dry-run needs none"
    )


def make_sdk_client(config: RunConfig) -> anthropic.Anthropic:
    """The SDK client; ANTHROPIC_BASE_URL is read by the SDK itself."""
    return anthropic.Anthropic(
        **api_credentials(), max_retries=config.api_max_retries, timeout=config.api_timeout
    )


def _is_transient(err: BaseException) -> bool:
    if isinstance(err, (anthropic.APIConnectionError, MalformedResponse, anthropic.APIResponseValidationError)):
        return True
    if isinstance(err, anthropic.APIStatusError):
        return err.status_code in (408, 409, 429) or err.status_code >= 500
    return False


@dataclass
class Spend:
    """What calls have cost so far: the run's and the current feature's."""

    run_cost_usd: float = 0.0
    run_tokens: TokenUsage = field(default_factory=TokenUsage)
    feature_tokens: TokenUsage = field(default_factory=TokenUsage)
    feature_cost_usd: float = 0.0
    summarizer_tokens: TokenUsage = field(default_factory=TokenUsage)
    summarizer_cost_usd: float = 0.0
    calls: int = 0


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
    ) -> None:
        self.config = config
        self.sdk = sdk
        self.spend = spend
        self.prices: PriceTable = config.price_table()
        self.on_retry = on_retry
        self._sleep = sleep

    # ---- limits -------------------------------------------------------------------------
    def affordable_max_tokens(self, model: str, request: dict[str, Any], *, feature_cap: bool) -> int:
        """The largest max_tokens this call may use without passing a cap; LimitReached if too small."""
        wanted = int(request.get("max_tokens", self.config.max_output_tokens))
        input_estimate = estimate_json_tokens(
            {k: request.get(k) for k in ("system", "tools", "messages", "output_config")}
        ) * _INPUT_MARGIN
        allowed = wanted
        if self.config.max_cost is not None:
            price = self.prices.price_for(model)
            worst_input_cost = input_estimate * max(price.input, price.cache_write) / 1_000_000
            remaining = self.config.max_cost - self.spend.run_cost_usd - worst_input_cost
            allowed = min(allowed, int(remaining * 1_000_000 / price.output) if remaining > 0 else 0)
            if allowed < min(_MIN_OUTPUT_TOKENS, wanted):
                raise LimitReached(
                    f"cost cap ${self.config.max_cost:.2f} reached: ${self.spend.run_cost_usd:.4f} spent and the next "
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

    # ---- the call -----------------------------------------------------------------------
    def create(self, *, purpose: str = "agent", **request: Any) -> CallResult:
        """One Messages API call with limits, retries and accounting. Raises the classes above."""
        model = request["model"]
        request["max_tokens"] = self.affordable_max_tokens(model, request, feature_cap=purpose == "agent")
        retrying = Retrying(
            retry=retry_if_exception(_is_transient),
            stop=stop_after_attempt(self.config.retry_attempts) | stop_after_delay(self.config.retry_deadline),
            wait=wait_random_exponential(multiplier=1, max=self.config.retry_max_wait),
            before_sleep=lambda rs: self.on_retry(
                f"model call failed ({_describe(rs.outcome.exception())}); retrying (attempt {rs.attempt_number + 1})"
            ),
            reraise=True,
            **({"sleep": self._sleep} if self._sleep else {}),
        )
        try:
            message = retrying(self._call_once, request)
        except (anthropic.AuthenticationError, anthropic.PermissionDeniedError) as err:
            raise ApiAuthError(
                f"the API refused the credentials ({_describe(err)}): check ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN"
            ) from None
        except anthropic.NotFoundError as err:
            raise ApiAuthError(f"model {model!r} not found ({_describe(err)}): check --model / --summarizer-model") from None
        except anthropic.APIStatusError as err:
            if _is_transient(err) or err.status_code == 402:
                raise ApiUnavailable(f"the API kept failing: {_describe(err)}") from None
            raise ModelRequestRejected(f"the API rejected the request: {_describe(err)}") from None
        except (anthropic.APIConnectionError, MalformedResponse, anthropic.APIResponseValidationError) as err:
            raise ApiUnavailable(f"the API is unreachable or answering badly: {_describe(err)}") from None
        return self._book(model, message, purpose)

    def _call_once(self, request: dict[str, Any]) -> Any:
        try:
            message = self.sdk.messages.create(**request)
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
        spend = self.spend
        spend.calls += 1
        spend.run_tokens = spend.run_tokens + usage
        spend.run_cost_usd += cost
        if purpose == "agent":
            spend.feature_tokens = spend.feature_tokens + usage
            spend.feature_cost_usd += cost
        else:
            spend.summarizer_tokens = spend.summarizer_tokens + usage
            spend.summarizer_cost_usd += cost
        return CallResult(message=message, usage=usage, cost_usd=cost)

    def summarizer_call(self, **request: Any) -> Any:
        """The Context Agent's `model_call`: same kwargs as messages.create, returns the message."""
        return self.create(purpose="summarizer", **request).message


def _describe(err: BaseException | None) -> str:
    if err is None:
        return "unknown error"
    status = getattr(err, "status_code", None)
    text = redact(str(err)).splitlines()[0] if str(err) else type(err).__name__
    text = text[:300]
    return f"{type(err).__name__} {status}: {text}" if status else f"{type(err).__name__}: {text}"
