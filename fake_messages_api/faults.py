"""Fault injection: the ways the real API and the network fail.

`FakeAPI.faults` is a policy, a callable ``(call_index, request_json) -> Fault | None``
asked once per API call (0-based over every call the server received, retries included;
``request_json`` is None when the body is not JSON). A `Fault` is one of:

- ``status``: an HTTP error with the API's error body (429 ``rate_limit_error``, 529
  ``overloaded_error``, 500 ``api_error``, 401, 403, 400, ...);
- ``malformed``: a 200 whose body is not JSON (``not_json``) or a message without
  ``content`` (``no_content``);
- ``slow``: the normal answer, after `delay` seconds (cut short when the server stops);
- ``drop``: the connection closed without any response;
- ``stream_error``: a streamed answer (``stream: true``) that stops after `after_events`
  events with the API's ``error`` event (``overloaded_error`` by default);
- ``stream_drop``: a streamed answer whose connection is cut after `after_events` events;
- ``slow_stream``: a streamed answer with `gap` seconds between events (time to first token,
  Ctrl-C mid-stream).

A stream fault met by a request that is not streamed acts as the nearest plain fault (the
error's HTTP status, a dropped connection, a late answer).

Kinds are named by HTTP status (int) or by name (``"drop"``, ``"slow"``, ``"not_json"``,
``"no_content"``, ``"malformed"``), so policies read like ``FailFirst(2, 529)``.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Optional

from fake_messages_api.api_errors import DEFAULT_MESSAGES, error_type_for

FaultKind = int | str
FaultPolicy = Callable[[int, dict[str, Any] | None], Optional["Fault"]]

DEFAULT_SLOW_SECONDS = 2.0


@dataclass(frozen=True)
class Fault:
    """One injected failure; build it with the class methods."""

    kind: Literal["status", "malformed", "slow", "drop", "stream_error", "stream_drop", "slow_stream"]
    status: int = 200
    error_type: str = ""
    message: str = ""
    body: str = ""
    """For ``malformed``: ``not_json`` or ``no_content``."""
    delay: float = 0.0
    """For ``slow``: seconds to wait before answering."""
    retry_after: float | None = None
    """Overrides the server's ``retry-after`` for this fault (status faults only)."""
    after_events: int = 3
    """For stream faults: how many events are sent before the error or the cut."""
    gap: float = 0.0
    """For ``slow_stream``: seconds between events."""

    @classmethod
    def http(
        cls,
        status: int,
        message: str | None = None,
        error_type: str | None = None,
        retry_after: float | None = None,
    ) -> Fault:
        """An HTTP error with the API's error body for `status`."""
        return cls(
            "status",
            status=status,
            error_type=error_type or error_type_for(status),
            message=message or DEFAULT_MESSAGES.get(status, "Error."),
            retry_after=retry_after,
        )

    @classmethod
    def not_json(cls) -> Fault:
        """A 200 whose body is not JSON (a proxy's HTML page, a truncated write)."""
        return cls("malformed", body="not_json")

    @classmethod
    def no_content(cls) -> Fault:
        """A 200 with a message object that lacks ``content``."""
        return cls("malformed", body="no_content")

    @classmethod
    def slow(cls, seconds: float = DEFAULT_SLOW_SECONDS) -> Fault:
        """The normal answer, `seconds` late."""
        return cls("slow", delay=seconds)

    @classmethod
    def drop(cls) -> Fault:
        """The connection closed with no response at all."""
        return cls("drop")

    @classmethod
    def stream_error(cls, after_events: int = 3, error_type: str = "overloaded_error", message: str = "Overloaded") -> Fault:
        """A streamed answer broken off by the API's ``error`` event after `after_events` events."""
        status = {"overloaded_error": 529, "api_error": 500, "rate_limit_error": 429}.get(error_type, 400)
        return cls("stream_error", status=status, error_type=error_type, message=message, after_events=after_events)

    @classmethod
    def stream_drop(cls, after_events: int = 3) -> Fault:
        """A streamed answer whose connection is cut after `after_events` events."""
        return cls("stream_drop", after_events=after_events)

    @classmethod
    def slow_stream(cls, gap: float = 0.5) -> Fault:
        """A streamed answer with `gap` seconds between its events."""
        return cls("slow_stream", gap=gap)

    @classmethod
    def of(cls, kind: FaultKind | Fault) -> Fault:
        """A fault from a short name: an HTTP status, or drop/slow/not_json/no_content."""
        if isinstance(kind, Fault):
            return kind
        if isinstance(kind, int):
            return cls.http(kind)
        named: dict[str, Callable[[], Fault]] = {
            "drop": cls.drop,
            "slow": cls.slow,
            "not_json": cls.not_json,
            "malformed": cls.not_json,
            "no_content": cls.no_content,
            "stream_error": cls.stream_error,
            "stream_drop": cls.stream_drop,
            "slow_stream": cls.slow_stream,
        }
        if kind.isdigit():
            return cls.http(int(kind))
        if kind not in named:
            raise ValueError(f"unknown fault kind {kind!r}; use a status or one of {sorted(named)}")
        return named[kind]()


class RandomFaults:
    """Fail a share `rate` of calls at random (reproducibly with `seed`) with one of `kinds`."""

    def __init__(
        self,
        rate: float = 0.2,
        kinds: Sequence[FaultKind | Fault] = (429, 529, 500),
        seed: int | None = 0,
    ) -> None:
        if not 0.0 <= rate <= 1.0:
            raise ValueError("rate must be between 0 and 1")
        self.rate = rate
        self.kinds = [Fault.of(k) for k in kinds]
        self._random = random.Random(seed)
        self._lock = threading.Lock()
        self.injected = 0
        """How many faults this policy has injected."""

    def __call__(self, call_index: int, request: dict[str, Any] | None) -> Fault | None:
        with self._lock:
            if self._random.random() >= self.rate:
                return None
            self.injected += 1
            return self._random.choice(self.kinds)


class FailFirst:
    """Fail the first `n` calls this policy sees with `kind`, then let everything through."""

    def __init__(self, n: int, kind: FaultKind | Fault = 529) -> None:
        self.n = n
        self.fault = Fault.of(kind)
        self._seen = 0
        self._lock = threading.Lock()

    def __call__(self, call_index: int, request: dict[str, Any] | None) -> Fault | None:
        with self._lock:
            self._seen += 1
            return self.fault if self._seen <= self.n else None


class FailCalls:
    """Fail exactly the calls whose index is in `indices` (0-based, as the server counts)."""

    def __init__(self, indices: Sequence[int], kind: FaultKind | Fault = 500) -> None:
        self.indices = frozenset(indices)
        self.fault = Fault.of(kind)

    def __call__(self, call_index: int, request: dict[str, Any] | None) -> Fault | None:
        return self.fault if call_index in self.indices else None
