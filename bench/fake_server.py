"""The fake Messages API in a process of its own, playing a benchmark plan.

    python3 -m bench.fake_server --plan short

prints the base URL on one line, serves until its stdin closes, then prints the billed usage
as one line of JSON and exits. The overhead benchmark runs the orchestrator in another
process against it, so that process's time and memory are the orchestrator's alone, as
they are in a real run against the real API.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any, Iterator

REPO_ROOT = Path(__file__).resolve().parent.parent


class ServedFake:
    """A running fake server process: its URL, and its usage once it has stopped."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.base_url = (process.stdout.readline() if process.stdout else "").strip()
        if not self.base_url.startswith("http://"):
            process.kill()
            raise RuntimeError(f"the fake API did not start: {self.base_url!r}")
        self.usage: dict[str, Any] = {}

    def stop(self) -> None:
        out, _ = self.process.communicate(timeout=60)  # closes its stdin: the signal to stop
        self.usage = json.loads(out.strip().splitlines()[-1]) if out.strip() else {}


@contextmanager
def served(plan: str = "short") -> Iterator[ServedFake]:
    """Start the fake in a child process for the duration of the block."""
    process = subprocess.Popen(
        [sys.executable, "-m", "bench.fake_server", "--plan", plan],
        cwd=REPO_ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    fake = ServedFake(process)
    try:
        yield fake
    finally:
        fake.stop()


def main() -> int:
    from bench.plans import multi_turn_plan, short_plan
    from bench.summarizers import diligent_summarizer
    from fake_messages_api.request_validation import sdk_facts
    from fake_messages_api.server import FakeAPI

    plans = {"short": short_plan, "multi-turn": multi_turn_plan}
    parser = argparse.ArgumentParser(prog="python3 -m bench.fake_server", description=__doc__.splitlines()[0])
    parser.add_argument("--plan", choices=sorted(plans), default="short")
    args = parser.parse_args()
    # Read the SDK's request schema now, so the first call does not pay for the import.
    sdk_facts.request_params("messages")
    sdk_facts.typed_tools()
    sdk_facts.content_block_types()
    # One request kept: the counters and usage stay exact without holding every prompt.
    with FakeAPI(default_plan=plans[args.plan], summarizer=diligent_summarizer, keep_requests=1) as fake:
        print(fake.base_url, flush=True)
        sys.stdin.read()  # until the benchmark closes our stdin, or exits
        usage, errors = fake.usage, fake.errors
    print(json.dumps({
        "agent": asdict(usage.agent), "summarizer": asdict(usage.summarizer),
        "errors": [repr(error) for error in errors[:3]],
    }), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
