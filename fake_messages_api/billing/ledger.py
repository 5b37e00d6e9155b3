"""What the fake received and billed, kept for tests and benchmarks to assert on.

Handler threads write here concurrently, so every access goes through one lock and readers
get copies: a test iterating `FakeAPI.requests` never sees a list changing under it.
"""

from __future__ import annotations

import threading
from collections import Counter, deque
from dataclasses import dataclass, field, replace
from typing import Any


@dataclass
class RecordedRequest:
    """One HTTP request the fake received, accepted or not."""

    index: int
    """0-based position among all requests received (the fault policies' call index)."""
    method: str
    path: str
    headers: dict[str, str]
    """Header names lower-cased."""
    body: Any
    """The parsed JSON body, or None when it was not JSON."""
    raw: bytes
    time: float
    """Wall-clock time (``time.time()``) of arrival."""
    kind: str = "other"
    """``agent``, ``summarizer``, ``count_tokens`` or ``other`` (unknown path, bad JSON...)."""
    feature_id: str | None = None
    step: int | None = None
    status: int | None = None
    """HTTP status sent; None when the connection was dropped or nothing was sent yet."""
    outcome: str = ""
    """``ok``, ``fault:<kind>``, ``down``, or ``error:<error type>``."""
    response: dict[str, Any] | None = None
    """The message (or count) object returned with a 200."""
    provider: str = "anthropic"
    """``anthropic``, or ``bedrock`` / ``vertex`` for their request shapes (`providers.py`);
    `body` then holds the Messages API request it stands for, `raw` what was sent."""


@dataclass
class UsageTotals:
    """Tokens billed over many calls, in the API's four usage fields."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    def add(self, usage: dict[str, Any]) -> None:
        """Add one response's ``usage``."""
        self.calls += 1
        self.input_tokens += int(usage.get("input_tokens") or 0)
        self.output_tokens += int(usage.get("output_tokens") or 0)
        self.cache_creation_input_tokens += int(usage.get("cache_creation_input_tokens") or 0)
        self.cache_read_input_tokens += int(usage.get("cache_read_input_tokens") or 0)

    def __add__(self, other: UsageTotals) -> UsageTotals:
        return UsageTotals(
            self.calls + other.calls,
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_creation_input_tokens + other.cache_creation_input_tokens,
            self.cache_read_input_tokens + other.cache_read_input_tokens,
        )

    @property
    def prompt_tokens(self) -> int:
        """All input tokens however billed: plain input, cache writes and cache reads."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    @property
    def total(self) -> int:
        """Every token billed, input and output."""
        return self.prompt_tokens + self.output_tokens

    @property
    def cache_read_share(self) -> float:
        """Share of input tokens that were cache reads (0 with no input)."""
        return self.cache_read_input_tokens / self.prompt_tokens if self.prompt_tokens else 0.0


@dataclass
class UsageReport:
    """Billed usage split by who asked: the coding agent or the summarizer."""

    agent: UsageTotals = field(default_factory=UsageTotals)
    summarizer: UsageTotals = field(default_factory=UsageTotals)

    @property
    def total(self) -> UsageTotals:
        """Agent and summarizer together."""
        return self.agent + self.summarizer


class Ledger:
    """The thread-safe record of requests, counters and billed usage.

    With `keep_requests` set, only the newest that many requests are kept in full (counters
    and totals stay exact): a 10,000-feature benchmark must not hold every prompt in memory.
    """

    def __init__(self, keep_requests: int | None = None) -> None:
        self._lock = threading.Lock()
        self._requests: deque[RecordedRequest] = deque(maxlen=keep_requests)
        self._received = 0
        self._kind_calls: Counter[str] = Counter()
        self._feature_calls: Counter[str] = Counter()
        self._usage = UsageReport()

    def record(self, **fields: Any) -> RecordedRequest:
        """Store a new request; its index is assigned here."""
        with self._lock:
            entry = RecordedRequest(index=self._received, **fields)
            self._received += 1
            self._requests.append(entry)
            return entry

    def update(self, entry: RecordedRequest, **fields: Any) -> None:
        """Fill in what became known about `entry` while handling it."""
        with self._lock:
            for name, value in fields.items():
                setattr(entry, name, value)
            if fields.get("feature_id"):
                self._feature_calls[fields["feature_id"]] += 1
            if fields.get("kind"):
                self._kind_calls[fields["kind"]] += 1

    def bill(self, kind: str, usage: dict[str, Any]) -> None:
        """Add a 200 response's usage to the agent's or the summarizer's totals."""
        with self._lock:
            (self._usage.summarizer if kind == "summarizer" else self._usage.agent).add(usage)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [replace(r) for r in self._requests]

    @property
    def count(self) -> int:
        """Requests received, whether or not they are still kept."""
        with self._lock:
            return self._received

    @property
    def kind_calls(self) -> Counter[str]:
        """Requests received per kind (``agent``, ``summarizer``, ``count_tokens``)."""
        with self._lock:
            return Counter(self._kind_calls)

    @property
    def feature_calls(self) -> Counter[str]:
        with self._lock:
            return Counter(self._feature_calls)

    @property
    def usage(self) -> UsageReport:
        with self._lock:
            return UsageReport(replace(self._usage.agent), replace(self._usage.summarizer))

    def reset(self) -> None:
        """Forget every request, counter and total."""
        with self._lock:
            self._requests.clear()
            self._received = 0
            self._kind_calls.clear()
            self._feature_calls.clear()
            self._usage = UsageReport()
