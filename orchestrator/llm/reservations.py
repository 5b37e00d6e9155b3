"""Money shared by model clients that call at the same time (`orchestrate run --jobs N`).

Each worker has a `ModelClient` of its own (its feature's tokens and cost are its own), and all
of them book the run's spend into one `SpendPool`. A call reserves its worst case in the pool
before it is sent, under the pool's lock, and the caps are checked against what is spent plus
what is reserved: concurrent calls can never jointly pass `--max-cost`.

The pool is also how a run stops its workers: `stop()` makes every client's next call raise
`KeyboardInterrupt` before anything is sent or reserved.
"""

from __future__ import annotations

import threading
from typing import Protocol


class RunSpend(Protocol):
    """What the pool books into: the run's side of `client.Spend`."""

    run_cost_usd: float
    unconfirmed_cost_usd: float
    unconfirmed_calls: int


class SpendPool:
    """The run's `Spend`, the worst cases of calls in flight, and the stop switch, under one lock."""

    def __init__(self, run: RunSpend) -> None:
        self.run = run
        self.lock = threading.RLock()
        self.reserved_usd = 0.0
        self.in_flight = 0  # calls reserved and not answered yet
        self.closed = False  # the run has booked what is in flight and books nothing more
        self._stopping = threading.Event()

    def hold(self, worst_usd: float) -> None:
        """Reserve a call's worst case (the caller holds `lock` since it checked the cap)."""
        with self.lock:
            self.reserved_usd += worst_usd
            self.in_flight += 1

    def release(self, worst_usd: float) -> None:
        """The call was answered (or refused): its reservation ends."""
        with self.lock:
            self.reserved_usd = max(0.0, self.reserved_usd - worst_usd)
            self.in_flight = max(0, self.in_flight - 1)

    def stop(self) -> None:
        """Make every client's next call raise KeyboardInterrupt (Ctrl-C, a limit, an error)."""
        self._stopping.set()

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    def raise_if_stopped(self) -> None:
        if self._stopping.is_set():
            raise KeyboardInterrupt("the run is stopping")

    def abandon_in_flight(self) -> float:
        """Calls still in flight when the run gives up waiting: the API may bill them, so their
        worst case counts as spent and unconfirmed (as a call cut off by Ctrl-C does). Returns it."""
        with self.lock:
            worst, self.reserved_usd = self.reserved_usd, 0.0
            calls, self.in_flight = self.in_flight, 0
            self.closed = True
            self.run.run_cost_usd += worst
            self.run.unconfirmed_cost_usd += worst
            self.run.unconfirmed_calls += calls
        return worst
