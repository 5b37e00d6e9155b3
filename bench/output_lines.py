"""Issue 27: the plain lines `orchestrate run` prints per feature, at 10, 100 and 1,000 features.

    python3 -m bench.output_lines [--features 10 100 1000] [--jobs 1]

Each size is a real `orchestrate run` (a child process, plain output as in CI) against the
fake API in a process of its own (`bench/fake_server.py`, the `short` plan: three model calls
a feature). Every feature's check is the spec's one `true` and the run uses `--regression
all`, so after feature k the guard re-runs the checks of all k-1 passed features: the case
where output used to grow with the run (one `regression check of X` line each). The shared
command runs once per guard run, which keeps 1,000 features to minutes.

Prints one JSON object per size: the lines on stdout, lines per feature (all of stdout over
the feature count), the most lines any one feature printed (from its `[i/n]` line to the
next feature's), and the `regression_check` events in `events.jsonl` (the details the
console leaves to -v, --json and the log). Leaves out: git checkpoints (the project is not a
repository), failures and retries (each adds its own fixed lines), stderr.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.fake_server import REPO_ROOT, served
from bench.plans import spec_document

_FEATURE_LINE = re.compile(r"^(\[[\w.-]+\] )?\[\d+/\d+\] ")


def measure(count: int, jobs: int) -> dict[str, Any]:
    """Run `count` features through the CLI; what it printed."""
    with tempfile.TemporaryDirectory(prefix="orchestrate-lines-") as tmp:
        root = Path(tmp) / "project"
        root.mkdir()
        spec = spec_document(count)
        spec["verify"] = "true"
        for feature in spec["features"]:
            feature.pop("verify", None)  # the spec's one command: every guard run runs it once
        spec_path = Path(tmp) / "spec.json"
        spec_path.write_text(json.dumps(spec), encoding="utf-8")
        with served("short") as fake:
            env = {**os.environ, "CI": "true", "ANTHROPIC_BASE_URL": fake.base_url,
                   "ANTHROPIC_API_KEY": "sk-ant-bench-0000", "PYTHONPATH": str(REPO_ROOT)}
            command = [sys.executable, "-m", "orchestrator", "run", str(spec_path), "--project-dir", str(root),
                       "--regression", "all", "--jobs", str(jobs)]
            started = time.monotonic()
            child = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
            took = time.monotonic() - started
        if child.returncode != 0:
            raise RuntimeError(f"the run of {count} features exited {child.returncode}:\n{child.stderr[-3000:]}")
        events = (root / ".autonomous" / "events.jsonl").read_text(encoding="utf-8").splitlines()
    lines = child.stdout.splitlines()
    return {
        "features": count,
        "jobs": jobs,
        "stdout_lines": len(lines),
        "lines_per_feature": round(len(lines) / count, 2),
        "most_lines_of_one_feature": _most_of_one(lines),
        "regression_check_events": sum(json.loads(line).get("type") == "regression_check" for line in events),
        "run_s": round(took, 1),
    }


def _most_of_one(lines: list[str]) -> int:
    """The longest stretch from one feature's `[i/n]` line to the next one's (the last feature's
    stretch holds the run's closing lines too: final verification, summary)."""
    starts = [i for i, line in enumerate(lines) if _FEATURE_LINE.match(line)]
    bounds = [*starts, len(lines)]
    return max((b - a for a, b in itertools.pairwise(bounds)), default=0)


def main() -> int:
    parser = argparse.ArgumentParser(prog="python3 -m bench.output_lines", description=__doc__.splitlines()[0])
    parser.add_argument("--features", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    for count in args.features:
        print(json.dumps(measure(count, args.jobs)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
