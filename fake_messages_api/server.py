"""`FakeAPI`: the fake Messages API as an object tests start, configure and inspect."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any, Literal

from fake_messages_api.api_behaviour import dispatch
from fake_messages_api.billing.caching import DEFAULT_MIN_CACHEABLE_TOKENS, PromptCache
from fake_messages_api.billing.ledger import Ledger, RecordedRequest, UsageReport
from fake_messages_api.cloud_providers import ProviderSettings
from fake_messages_api.faults import FaultPolicy
from fake_messages_api.handler import FakeHTTPServer
from fake_messages_api.reply import Reply
from fake_messages_api.request_validation.validation import DEFAULT_MAX_OUTPUT_TOKENS
from fake_messages_api.scripted_agent.forced_tools import ToolAnswerer, default_tool_answer
from fake_messages_api.scripted_agent.plans import Plan, default_plan
from fake_messages_api.scripted_agent.summarizer import Summarizer, default_summarizer

DEFAULT_RETRY_AFTER = 0.01  # seconds; small so that the SDK's retries keep tests fast


class FakeAPI:
    """A local fake of the Anthropic Messages API, served over real HTTP on 127.0.0.1.

    ``with FakeAPI() as fake:`` starts it on an ephemeral port; point the SDK at
    ``fake.base_url`` with any key. Everything below may be changed while it runs:

    - ``plans[feature_id]``: the scripted agent for a feature; ``default_plan`` for the rest;
    - ``summarizer``: answers structured-output requests, ``(request_json) -> dict | str``;
    - ``tool_answers``: answers forced tool-use requests, ``(tool_name, request_json) -> dict``
      (see `forced_tools.py`; `ScriptedToolAnswers` plays a script);
    - ``faults``: ``(call_index, request_json) -> Fault | None``, see `faults.py`;
    - ``rejected_keys`` (401) and ``forbidden_keys`` (403);
    - ``retry_after``: seconds put in retryable errors' headers (None: no header);
    - ``clock`` and ``min_cacheable_tokens``: the prompt cache's time and minimum;
    - ``known_models``: when a set, other models get the API's 404.

    ``keep_requests=N`` keeps only the newest N requests in `requests` (counters and usage
    stay exact), for long benchmark runs. ``latency`` (seconds, settable) delays every answer to
    a Messages call, as a real model's time would (a ``slow`` fault's delay replaces it): with
    ``stream: true`` it is the time to the first event. ``stream_gap`` (seconds, settable)
    spaces a streamed answer's events, as a model writing its tokens would.
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        plans: dict[str, Plan] | None = None,
        default_plan: Plan = default_plan,
        summarizer: Summarizer = default_summarizer,
        faults: FaultPolicy | None = None,
        clock: Callable[[], float] = time.monotonic,
        min_cacheable_tokens: int = DEFAULT_MIN_CACHEABLE_TOKENS,
        retry_after: float | None = DEFAULT_RETRY_AFTER,
        rejected_keys: Iterable[str] = ("sk-ant-bad",),
        forbidden_keys: Iterable[str] = (),
        known_models: Iterable[str] | None = None,
        max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS,
        keep_requests: int | None = None,
        latency: float = 0.0,
    ) -> None:
        self.host = host
        self.latency = latency
        self.stream_gap = 0.0  # seconds between the events of a streamed answer (tokens arriving)
        self.plans: dict[str, Plan] = dict(plans or {})
        self.default_plan: Plan = default_plan
        self.summarizer: Summarizer = summarizer
        self.tool_answers: ToolAnswerer = default_tool_answer
        self.faults: FaultPolicy | None = faults
        self.retry_after = retry_after
        self.rejected_keys: set[str] = set(rejected_keys)
        self.forbidden_keys: set[str] = set(forbidden_keys)
        self.known_models: set[str] | None = set(known_models) if known_models is not None else None
        self.max_output_tokens = max_output_tokens
        self.cache = PromptCache(clock=clock, min_cacheable_tokens=min_cacheable_tokens)
        self.ledger = Ledger(keep_requests)
        self.providers = ProviderSettings()  # the credentials the Bedrock and Vertex routes accept
        self.down_mode: Literal["drop", "503"] | None = None
        self._errors: list[BaseException] = []
        self._errors_lock = threading.Lock()
        self._requested_port = port
        self._server: FakeHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> FakeAPI:
        """Bind and serve in a background thread; returns self."""
        if self._server is not None:
            return self
        self._server = FakeHTTPServer((self.host, self._requested_port), self._dispatch)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
            name=f"fake-anthropic-api:{self.port}", daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving: pending slow replies end at once, open connections are closed."""
        if self._server is None:
            return
        self._server.close_connections()
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> FakeAPI:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The port actually bound (the server must be started)."""
        if self._server is None:
            raise RuntimeError("FakeAPI is not running; use `with FakeAPI() as fake:`")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``, for ``ANTHROPIC_BASE_URL`` or ``Anthropic(base_url=...)``."""
        return f"http://{self.host}:{self.port}"

    def env(self, api_key: str = "test-key") -> dict[str, str]:
        """Environment variables that point the SDK (and the orchestrator) at this fake."""
        return {"ANTHROPIC_BASE_URL": self.base_url, "ANTHROPIC_API_KEY": api_key}

    def client(self, api_key: str = "test-key", **kwargs: Any) -> Any:
        """An ``anthropic.Anthropic`` client for this fake (`kwargs` go to the client)."""
        import anthropic

        return anthropic.Anthropic(base_url=self.base_url, api_key=api_key, **kwargs)

    # -- behaviour switches -----------------------------------------------------------------

    def down(self, mode: Literal["drop", "503"] = "drop") -> None:
        """Refuse every call, by closing the connection (``drop``) or with 503s."""
        self.down_mode = mode

    def up(self) -> None:
        """Answer calls again after `down`."""
        self.down_mode = None

    @property
    def clock(self) -> Callable[[], float]:
        """The cache's clock (settable, e.g. to a `ManualClock`)."""
        return self.cache.clock

    @clock.setter
    def clock(self, value: Callable[[], float]) -> None:
        self.cache.clock = value

    @property
    def min_cacheable_tokens(self) -> int:
        """Shortest prefix the cache stores (1024 by default, like Sonnet)."""
        return self.cache.min_cacheable_tokens

    @min_cacheable_tokens.setter
    def min_cacheable_tokens(self, value: int) -> None:
        self.cache.min_cacheable_tokens = value

    # -- what happened ----------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in arrival order, rejected ones included (a copy)."""
        return self.ledger.requests

    @property
    def calls(self) -> int:
        """How many requests the server has received."""
        return self.ledger.count

    @property
    def feature_calls(self) -> Counter[str]:
        """Agent requests received per feature id (faulted and rejected ones included)."""
        return self.ledger.feature_calls

    @property
    def usage(self) -> UsageReport:
        """Tokens billed by successful answers: ``.agent``, ``.summarizer``, ``.total``."""
        return self.ledger.usage

    @property
    def summarizer_calls(self) -> int:
        """How many structured-output (summarizer) requests were received."""
        return self.ledger.kind_calls["summarizer"]

    @property
    def forced_tool_calls(self) -> list[RecordedRequest]:
        """Forced tool-use requests (structured calls such as `orchestrate plan`'s), in order."""
        return [r for r in self.ledger.requests if r.kind == "forced_tool"]

    @property
    def errors(self) -> list[BaseException]:
        """Exceptions raised by plans or summarizers (each answered with a 500)."""
        with self._errors_lock:
            return list(self._errors)

    def record_error(self, error: BaseException) -> None:
        """Keep an exception a plan or summarizer raised, for the test to see."""
        with self._errors_lock:
            self._errors.append(error)

    def agent_requests(self, feature_id: str | None = None) -> list[RecordedRequest]:
        """Requests played by the scripted agent, optionally only for `feature_id`."""
        return [
            r for r in self.ledger.requests
            if r.kind == "agent" and (feature_id is None or r.feature_id == feature_id)
        ]

    def reset(self) -> None:
        """Forget requests, counters, usage, errors and cache entries; keep the configuration."""
        self.ledger.reset()
        self.cache.clear()
        with self._errors_lock:
            self._errors.clear()

    def _dispatch(self, method: str, target: str, headers: dict[str, str], raw: bytes) -> Reply:
        return dispatch(self, method, target, headers, raw)
