"""Run the fake API standalone: ``python -m fake_messages_api --port 0 --plans plans.json``.

Prints the base URL on stdout (one line, flushed) and serves until killed, for benchmarks
and demos that drive the orchestrator in another process. Plan files are described in
`plans.load_plans`.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence

from fake_messages_api.faults import RandomFaults
from fake_messages_api.request_validation import sdk_facts
from fake_messages_api.scripted_agent.forced_tools import load_tool_answers
from fake_messages_api.scripted_agent.plans import load_plans
from fake_messages_api.server import FakeAPI


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments, serve, and return an exit code when stopped by a signal."""
    parser = argparse.ArgumentParser(prog="python -m fake_messages_api", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port; 0 picks a free one (default)")
    parser.add_argument("--plans", help="JSON plan file: {feature_id or '*': [[block, ...], ...]}")
    parser.add_argument(
        "--tool-answers", help="JSON file {tool_name: [input, ...]}: forced tool calls answered in order (orchestrate plan)"
    )
    parser.add_argument("--min-cacheable-tokens", type=int, default=1024)
    parser.add_argument("--fault-rate", type=float, default=0.0, help="share of calls answered 429/529/500")
    parser.add_argument("--seed", type=int, default=0, help="seed for --fault-rate")
    args = parser.parse_args(argv)

    fake = FakeAPI(host=args.host, port=args.port, min_cacheable_tokens=args.min_cacheable_tokens)
    if args.plans:
        plans, default = load_plans(args.plans)
        fake.plans.update(plans)
        if default is not None:
            fake.default_plan = default
    if args.tool_answers:
        fake.tool_answers = load_tool_answers(args.tool_answers)
    if args.fault_rate > 0:
        fake.faults = RandomFaults(rate=args.fault_rate, seed=args.seed)

    # Read the SDK's request schema now, so the first call is not the one paying the import.
    sdk_facts.request_params("messages")
    sdk_facts.typed_tools()
    sdk_facts.content_block_types()

    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    with fake:
        print(fake.base_url, flush=True)
        stop.wait()
    usage = fake.usage.total
    print(
        f"fake API stopped after {fake.calls} calls; billed input {usage.input_tokens}, "
        f"cache write {usage.cache_creation_input_tokens}, cache read "
        f"{usage.cache_read_input_tokens}, output {usage.output_tokens}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
