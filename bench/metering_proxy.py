"""The metering proxy (issue 32): what it adds to each of Claude Code's calls, and to each attempt.

`python3 -m bench.metering_proxy [--calls N]` serves the fake Messages API in a process of its
own and calls it with plain streaming HTTP (httpx2) two ways, alternated: straight to the fake,
and through a `MeteringProxy` booking into a real state journal (`StateStore.record_spend`,
as a run does). The request is Claude Code's size (a system prompt and tool list of about
`SYSTEM_CHARS` characters; Claude Code 2.1's first request is about 70 KB), the answer the
fake's usual streamed text. It prints, as medians:

- time to the first byte of the answer and to its end, direct and through the proxy: the
  proxy's cost per call (reading the body, estimating its tokens for the cap, journaling the
  reservation, a second HTTP hop, reading usage from the events, booking);
- the time to start and close one proxy (one per attempt).

Not measured: the real API's latency (seconds, which this overhead sits beside), TLS to the
real API (paid by the direct path too), and a real CLI's own time.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx2

SYSTEM_CHARS = 70_000
_REQUEST: dict[str, Any] = {
    "model": "claude-sonnet-5-5", "max_tokens": 32000, "stream": True,
    "system": [{"type": "text", "text": "You are Claude Code. " * (SYSTEM_CHARS // 21)}],
    "messages": [{"role": "user", "content": "## Feature\nID: bench\nSay hello."}],
}


def _serve() -> None:
    from fake_messages_api.server import FakeAPI
    from fake_messages_api.scripted_agent.plans import text

    with FakeAPI(default_plan=[[text("Hello. " * 200)]], keep_requests=1) as fake:
        print(fake.base_url, flush=True)
        sys.stdin.read()


def _call(http: httpx2.Client, url: str, key: str) -> tuple[float, float]:
    """(seconds to the first byte, seconds to the end) of one streamed call."""
    start = time.perf_counter()
    first = 0.0
    headers = {"x-api-key": key, "anthropic-version": "2023-06-01"}
    with http.stream("POST", url + "/v1/messages", json=_REQUEST, headers=headers) as response:
        for _chunk in response.iter_raw():
            first = first or time.perf_counter() - start
    return first, time.perf_counter() - start


def _proxy(url: str, root: Path) -> Any:
    from orchestrator.claude_code.metering.metering_proxy import MeteringProxy
    from orchestrator.claude_code.metering.upstream import Upstream
    from orchestrator.config import RunConfig
    from orchestrator.llm.client import ModelClient
    from orchestrator.llm.costs.spend import Spend
    from orchestrator.llm.endpoint.sdk import Credentials
    from orchestrator.store.disk.paths import ProjectPaths
    from orchestrator.store.state import StateStore

    store = StateStore(ProjectPaths.for_project(root))
    client = ModelClient(RunConfig(max_cost=1000.0).client_settings(), None, Spend(feature_id="bench"), journal=store.record_spend)
    return MeteringProxy(upstream=Upstream(url, Credentials(api_key="bench-key")), client=client, models={"claude-sonnet-5-5"}, feature_id="bench",
                         attempt=1, on_event=lambda _event: None)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--serve", action="store_true")
    args = parser.parse_args()
    if args.serve:
        _serve()
        return
    server = subprocess.Popen([sys.executable, "-m", "bench.metering_proxy", "--serve"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        url = (server.stdout.readline() if server.stdout else "").strip()
        with tempfile.TemporaryDirectory() as root, httpx2.Client(timeout=60) as http, _proxy(url, Path(root)) as proxy:
            for _ in range(3):  # warm: connections, imports
                _call(http, url, "bench-key"), _call(http, proxy.base_url, proxy.token)
            direct, proxied = [], []
            for _ in range(args.calls):
                direct.append(_call(http, url, "bench-key"))
                proxied.append(_call(http, proxy.base_url, proxy.token))
            starts = []
            for _ in range(args.calls):
                began = time.perf_counter()
                with _proxy(url, Path(root)):
                    pass
                starts.append(time.perf_counter() - began)
    finally:
        if server.stdin:
            server.stdin.close()
        server.wait(10)
    _report(direct, proxied, starts, args.calls)


def _report(direct: list[tuple[float, float]], proxied: list[tuple[float, float]], starts: list[float], calls: int) -> None:
    def ms(values: list[float]) -> str:
        return f"{statistics.median(values) * 1000:.1f} ms"

    print(f"{calls} calls each way, request {len(str(_REQUEST)) // 1000} KB, medians")
    print(f"first byte: direct {ms([d[0] for d in direct])}, through the proxy {ms([p[0] for p in proxied])}")
    print(f"whole call: direct {ms([d[1] for d in direct])}, through the proxy {ms([p[1] for p in proxied])}")
    print(f"one proxy started and closed: {ms(starts)}")


if __name__ == "__main__":
    main()
