"""Money shared by model clients that call at the same time (`orchestrate run --jobs N`).

Each worker has a `ModelClient` of its own (its feature's tokens and cost are its own), and all
of them book the run's spend into one `SpendPool`. A call reserves its worst case in the pool
before it is sent, under the pool's lock, and the caps are checked against what is spent plus
what is reserved: concurrent calls can never jointly pass `--max-cost`.

The pool also holds the run's `StopToken`, the way a run stops its workers: `stop()` makes every
client's next call, and every check of a verifier given the token, raise `KeyboardInterrupt`
before anything is sent, reserved or started.
"""

from __future__ import annotations

import threading

from orchestrator.llm.costs.spend import RunSpend


class StopToken:
    """A run's stop switch, given to what must stop when the run does (clients, verifiers)."""

    def __init__(self) -> None:
        self._stopping = threading.Event()

    def stop(self) -> None:
        self._stopping.set()

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    def raise_if_stopped(self) -> None:
        if self._stopping.is_set():
            raise KeyboardInterrupt("the run is stopping")


class SpendPool:
    """The run's `RunSpend`, the worst cases of calls in flight, and the stop switch, under one lock."""

    def __init__(self, run: RunSpend, stop: StopToken | None = None) -> None:
        self.run = run
        self.token = stop or StopToken()
        self.lock = threading.RLock()
        self.reserved_usd = 0.0
        self.in_flight = 0  # calls reserved and not answered yet
        self.closed = False  # the run has booked what is in flight and books nothing more

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
        self.token.stop()

    @property
    def stopping(self) -> bool:
        return self.token.stopping

    def raise_if_stopped(self) -> None:
        self.token.raise_if_stopped()

    def abandon_in_flight(self) -> float:
        """Calls still in flight when the run gives up waiting: the API may bill them, so their
        worst case counts as spent and unconfirmed (as a call cut off by Ctrl-C does). Returns it."""
        with self.lock:
            worst, self.reserved_usd = self.reserved_usd, 0.0
            calls, self.in_flight = self.in_flight, 0
            self.closed = True
            self.run.book_unconfirmed(worst, None, calls)
        return worst
