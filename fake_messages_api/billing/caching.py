"""Prompt caching, following the API's published rules.

- The prompt is the ordered sequence tools -> system -> messages (see `prompt.py`).
- A block with ``cache_control`` is a breakpoint: it closes the prefix up to and including
  that block. At most 4 per request (enforced in `validation.py`).
- A request reads the longest cached prefix that ends at one of its breakpoints, or at any
  block boundary up to `lookback` (20) blocks before one: that is how a conversation whose
  breakpoint moves forward every turn still hits the entry the previous turn wrote.
- Tokens from the end of what was read up to the last breakpoint are written to the cache
  (``cache_creation_input_tokens``); everything after the last breakpoint is plain input.
- An entry lives `ttl` (5 minutes, or 1 hour with ``"ttl": "1h"``) from its last use; a read
  refreshes it at no cost.
- A prefix shorter than the model's minimum cacheable length is never cached.
- Entries are keyed by a hash chain over the model and every block before the boundary, so a
  change in the model, the tools or the system prompt misses everything after it.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from fake_messages_api.billing.prompt import PromptBlock

TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}
DEFAULT_MIN_CACHEABLE_TOKENS = 1024  # Sonnet's minimum; Haiku's is higher
LOOKBACK_BLOCKS = 20

Clock = Callable[[], float]


@dataclass(frozen=True)
class CacheOutcome:
    """How one request's prompt tokens are billed."""

    input_tokens: int
    cache_creation_input_tokens: int
    cache_read_input_tokens: int
    ephemeral_5m_input_tokens: int
    ephemeral_1h_input_tokens: int


class ManualClock:
    """A clock for tests: time stands still until `advance` is called."""

    def __init__(self, start: float = 1_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        """Move time forward by `seconds`."""
        self.now += seconds


def _prefix_hashes(model: str, blocks: list[PromptBlock]) -> list[str]:
    digest = hashlib.sha256(model.encode()).hexdigest()
    hashes = []
    for block in blocks:
        digest = hashlib.sha256((digest + block.key).encode()).hexdigest()
        hashes.append(digest)
    return hashes


class PromptCache:
    """The fake's cache store; thread-safe, one per fake server."""

    def __init__(
        self,
        clock: Clock = time.monotonic,
        min_cacheable_tokens: int = DEFAULT_MIN_CACHEABLE_TOKENS,
        lookback: int = LOOKBACK_BLOCKS,
    ) -> None:
        self.clock = clock
        self.min_cacheable_tokens = min_cacheable_tokens
        self.lookback = lookback
        self._expiry: dict[str, float] = {}
        self._lock = threading.Lock()
        self._applied = 0

    def __len__(self) -> int:
        with self._lock:
            now = self.clock()
            return sum(1 for expiry in self._expiry.values() if expiry > now)

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._expiry.clear()

    def apply(self, model: str, blocks: list[PromptBlock]) -> CacheOutcome:
        """Bill `blocks` for `model` against the cache, and write what the request caches."""
        hashes = _prefix_hashes(model, blocks)
        cumulative: list[int] = []
        running = 0
        for block in blocks:
            running += block.tokens
            cumulative.append(running)
        total = running
        breakpoints = [i for i, block in enumerate(blocks) if block.ttl is not None]

        with self._lock:
            now = self.clock()
            self._applied += 1
            if self._applied % 512 == 0:
                # Long runs would otherwise keep every entry ever written.
                self._expiry = {h: e for h, e in self._expiry.items() if e > now}
            read_end = self._longest_hit(hashes, breakpoints, now)
            read_tokens = cumulative[read_end] if read_end >= 0 else 0
            if read_end >= 0:
                # A hit refreshes the entry's lifetime, as the API does.
                ttl = self._ttl_of(blocks, read_end, breakpoints)
                self._expiry[hashes[read_end]] = max(self._expiry[hashes[read_end]], now + ttl)

            written = {"5m": 0, "1h": 0}
            segment_start = read_tokens
            for index in breakpoints:
                if index <= read_end or cumulative[index] < self.min_cacheable_tokens:
                    continue
                ttl_name = blocks[index].ttl or "5m"
                written[ttl_name if ttl_name in written else "5m"] += cumulative[index] - segment_start
                segment_start = cumulative[index]
                self._expiry[hashes[index]] = now + TTL_SECONDS.get(ttl_name, 300.0)

        creation = written["5m"] + written["1h"]
        return CacheOutcome(
            input_tokens=total - read_tokens - creation,
            cache_creation_input_tokens=creation,
            cache_read_input_tokens=read_tokens,
            ephemeral_5m_input_tokens=written["5m"],
            ephemeral_1h_input_tokens=written["1h"],
        )

    def _longest_hit(self, hashes: list[str], breakpoints: list[int], now: float) -> int:
        """Index of the last block of the longest live cached prefix the request may read."""
        for index in sorted(self._candidates(breakpoints), reverse=True):
            expiry = self._expiry.get(hashes[index])
            if expiry is not None and expiry > now:
                return index
        return -1

    def _candidates(self, breakpoints: list[int]) -> set[int]:
        found: set[int] = set()
        for bp in breakpoints:
            found.update(range(max(bp - self.lookback, 0), bp + 1))
        return found

    @staticmethod
    def _ttl_of(blocks: list[PromptBlock], index: int, breakpoints: list[int]) -> float:
        # An entry read at a lookback boundary takes the TTL of the breakpoint that found it.
        for bp in breakpoints:
            if bp >= index:
                return TTL_SECONDS.get(blocks[bp].ttl or "5m", 300.0)
        return TTL_SECONDS["5m"]
