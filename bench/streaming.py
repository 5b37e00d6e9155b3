"""Streamed model calls (issue 30): time to the first token, and what streaming costs per call.

`python3 -m bench.streaming [--calls N]` serves the fake Messages API in a process of its own
(so its time is not the client's) and calls it through the SDK two ways, same request, same
answer (about 2,900 output tokens: some text, then a file written in one tool call): streamed,
as the program calls it (`orchestrator.llm.streaming.stream_message`), and not streamed
(`messages.create`, as it called before). It prints:

- time to the first token, with the fake taking `LATENCY` s to start and `GAP` s between
  events (a model writing; a non-streamed answer comes whole after as long);
- the whole call at that pace, streamed and not: what streaming adds to a call's wall time
  when the answer arrives as a model writes it (the client reads each event as it comes);
- the whole call with no model time at all (every event at once): the client's CPU cost of
  reading the answer as events rather than as one body, which a real call spreads over the
  model's writing time.

Calls alternate streamed / not streamed so that the machine's load falls on both alike.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from typing import Any

import anthropic

from orchestrator.llm.streaming import stream_message

LATENCY, GAP = 0.3, 0.01
_REQUEST = {
    "model": "claude-sonnet-5-5", "max_tokens": 8192,
    "messages": [{"role": "user", "content": "## Feature\nID: bench\nWrite the module."}],
}


def _serve(latency: float, gap: float) -> None:
    from fake_messages_api.server import FakeAPI
    from fake_messages_api.scripted_agent.plans import edit_create, text

    answer = [text("I will write the module now. " * 20), edit_create("pkg/module.py", "def f(x):\n    return x\n" * 200)]
    with FakeAPI(default_plan=[answer], latency=latency, keep_requests=1) as fake:
        fake.stream_gap = gap
        print(fake.base_url, flush=True)
        sys.stdin.read()


def _streamed(sdk: Any) -> tuple[float, float]:
    """(seconds to the first token, seconds to the whole message), streamed."""
    start, first = time.perf_counter(), [0.0]

    def arrived(_tokens: int) -> None:
        first[0] = first[0] or time.perf_counter() - start

    stream_message(sdk, dict(_REQUEST), arrived)
    return first[0], time.perf_counter() - start


def _plain(sdk: Any) -> tuple[float, float]:
    start = time.perf_counter()
    sdk.messages.create(**_REQUEST)
    whole = time.perf_counter() - start
    return whole, whole  # the first token arrives with the rest


def _pair(latency: float, gap: float, calls: int) -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
    server = subprocess.Popen([sys.executable, "-m", "bench.streaming", "--serve", str(latency), str(gap)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        url = (server.stdout.readline() if server.stdout else "").strip()
        sdk = anthropic.Anthropic(base_url=url, api_key="bench-key", max_retries=0)
        for _ in range(3):  # warm: connection pool, imports, caches
            _streamed(sdk), _plain(sdk)
        streamed, plain = [], []
        for _ in range(calls):
            streamed.append(_streamed(sdk))
            plain.append(_plain(sdk))
        return streamed, plain
    finally:
        server.communicate(timeout=30)


def _ms(samples: list[tuple[float, float]], index: int) -> float:
    return statistics.median(sample[index] for sample in samples) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--serve", nargs=2, type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        _serve(*args.serve)
        return
    streamed, plain = _pair(LATENCY, GAP, max(3, args.calls // 5))
    print(f"paced like a model ({LATENCY} s to start, {GAP} s an event), median of {len(streamed)} calls each:")
    print(f"  first token: streamed {_ms(streamed, 0):.0f} ms, not streamed {_ms(plain, 0):.0f} ms (the whole answer)")
    print(f"  whole call:  streamed {_ms(streamed, 1):.0f} ms, not streamed {_ms(plain, 1):.0f} ms, "
          f"streaming adds {_ms(streamed, 1) - _ms(plain, 1):+.0f} ms")
    streamed, plain = _pair(0.0, 0.0, args.calls)
    print(f"no model time (every event at once), median of {len(streamed)} calls each:")
    print(f"  whole call:  streamed {_ms(streamed, 1):.1f} ms, not streamed {_ms(plain, 1):.1f} ms, "
          f"streaming adds {_ms(streamed, 1) - _ms(plain, 1):+.1f} ms of client CPU")


if __name__ == "__main__":
    main()
