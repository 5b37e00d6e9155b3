"""Run the benchmark suite (issue #9) against the fake Messages API: no key, no network.

    python3 bench/run.py            # the full suite, about 10 minutes on 2 cores
    python3 bench/run.py --quick    # a reduced suite in under a minute (the CI smoke run)

Prints one table (figure, target, met or missed) and writes bench/results.json. Progress
goes to stderr. A missed target is reported, never an error: the exit code is 0 unless a
benchmark could not run. docs/benchmarks.md says how each figure is measured.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # `python3 bench/run.py` from a fresh clone
    sys.path.insert(0, str(REPO_ROOT))

from bench import (
    constraints,
    machine,
    memory,
    overhead,
    report,
    state_size,
    status,
    tokens,
)
from bench.harness import scratch_dir

RESULTS = REPO_ROOT / "bench" / "results.json"


class Suite:
    """How much of each benchmark to run."""

    def __init__(self, quick: bool) -> None:
        self.mode = "quick" if quick else "full"
        # Feature count -> repeats (the median run is kept: small runs are noisy).
        self.overhead_runs = {10: 3, 100: 1} if quick else {10: 5, 100: 3, 1000: 1, 10_000: 1}
        self.context_positions = (10, 100) if quick else (10, 100, 1000, 10_000)
        self.strategy_features = 20 if quick else 100
        self.memory = {"features": 100, "constraints": 10, "decisions": 20} if quick else {
            "features": 500, "constraints": 50, "decisions": 100}
        self.state_features = 1000 if quick else 10_000
        self.failed_features = 10_000 if quick else 100_000
        self.status_features = (1000,) if quick else (10_000, 100_000)
        self.constraints = 500 if quick else 5000


def main() -> int:
    parser = argparse.ArgumentParser(prog="python3 bench/run.py", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a reduced suite, under a minute (CI)")
    suite = Suite(parser.parse_args().quick)
    started = time.perf_counter()
    scratch = scratch_dir()
    host = machine.describe(str(scratch) if scratch else None)

    runs: dict[str, Any] = {}
    for count, repeats in suite.overhead_runs.items():
        _progress(f"overhead: {count} features" + (f" x{repeats}" if repeats > 1 else ""))
        runs[str(count)] = overhead.measure(count, repeats=repeats, sample_positions=suite.context_positions)
    _progress(f"strategies: {suite.strategy_features} multi-turn features x compressed, window, replay")
    strategies = tokens.measure(suite.strategy_features)
    _progress(f"memory quality: {suite.memory['features']} features, careless summarizer")
    kept = memory.measure(**suite.memory)
    _progress("memory quality: the same with a similar but different rule planted for each constraint")
    kept_apart = memory.measure(**suite.memory, siblings=True)
    duplicate_test = memory.error_rates()
    _progress(f"state size: {suite.state_features} passed features, quiet and talkative checks")
    state = state_size.measure(suite.state_features)
    _progress(f"state size: {suite.failed_features} features failed with loud checks")
    failed = state_size.failed_snapshot(suite.failed_features)
    _progress(f"status: {', '.join(map(str, suite.status_features))} features")
    shown = status.measure(suite.status_features)
    _progress(f"constraints: {suite.constraints} recorded, folded every 5 features")
    rules = constraints.measure(suite.constraints)

    largest = runs[str(max(suite.overhead_runs))]
    host["load_average_after"] = machine.describe()["load_average"]
    results = {
        "mode": suite.mode,
        "overhead_ms_per_feature": {count: run["overhead_ms_per_feature"] for count, run in runs.items()},
        "peak_rss_mb": largest["peak_rss_mb"],
        "context_tokens": largest["context_tokens"],
        "input_tokens": strategies["input_tokens"],
        "compressed_vs_replay_saving": round(strategies["compressed_vs_replay_saving"], 4),
        "cache_read_share": round(strategies["cache_read_share"], 4),
        "summarizer_share": round(strategies["summarizer_share"], 4),
        "summarizer_cost_share": round(strategies["summarizer_cost_share"], 4),
        "constraint_retention": round(kept["constraint_retention"], 4),
        "machine": host,
        "details": {"overhead": runs, "strategies": strategies, "memory": kept, "memory_siblings": kept_apart,
                    "duplicate_test": duplicate_test, "state_size": state,
                    "failed_state": failed, "status": shown, "constraints": rules},
        "seconds": round(time.perf_counter() - started, 1),
    }
    RESULTS.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(report.render(results))
    print(f"\n{suite.mode} run took {results['seconds']:.0f} s; results in {RESULTS.relative_to(REPO_ROOT)}")
    return 0


def _progress(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
