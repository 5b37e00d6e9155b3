"""Goal 1 and 2: the orchestrator's own time per feature at a given scale, its peak memory,
and the size of the injected `## Project Context` along the run.

Each run is a fresh project and a fresh process (`python3 -m bench.overhead ...`), so its
peak RSS is that run's alone, and the fake API is another process (bench/fake_server.py), so
neither its time nor its memory is counted: the child is what `orchestrate run` would be.
The overhead is the run's wall time minus the time inside model calls and feature checks,
divided by the number of features; the fake answers at once and every check is `true`.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.fake_server import REPO_ROOT, served
from bench.plans import spec_document

SEGMENTS = 10  # the run is cut in this many equal parts to show whether the loop's cost grows


def measure(count: int, *, repeats: int = 1, sample_positions: tuple[int, ...] = ()) -> dict[str, Any]:
    """Run `count` features `repeats` times; the run with the median overhead, with the
    largest peak RSS of all."""
    from bench.harness import new_project, scratch_dir

    runs = []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory(prefix="orchestrate-bench-", dir=scratch_dir()) as tmp:
            # The spec is written here, not in the child: building it is not the orchestrator's memory.
            root, spec_path = new_project(Path(tmp), spec_document(count))
            with served("short") as fake:
                command = [
                    sys.executable, "-m", "bench.overhead", "--project", str(root), "--spec", str(spec_path),
                    "--url", fake.base_url, "--sample", ",".join(map(str, sample_positions)),
                ]
                child = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, check=False)
            if child.returncode != 0:
                raise RuntimeError(f"overhead run of {count} features failed:\n{child.stderr[-3000:]}")
            if fake.usage.get("errors"):
                raise RuntimeError(f"the fake API's plan or summarizer raised: {fake.usage['errors']}")
            runs.append(json.loads(child.stdout.strip().splitlines()[-1]))
    runs.sort(key=lambda run: run["overhead_ms_per_feature"])
    chosen = runs[len(runs) // 2]
    chosen["peak_rss_mb"] = max(run["peak_rss_mb"] for run in runs)
    chosen["repeats"] = [run["overhead_ms_per_feature"] for run in runs]
    return chosen


def _child(project: Path, spec: Path, url: str, sample_positions: tuple[int, ...]) -> dict[str, Any]:
    from bench.harness import peak_rss_mb, run_spec

    measure = run_spec(project, spec, url, sample_positions=sample_positions)
    if measure.exit_code != 0 or len(measure.marks) != measure.features:
        raise RuntimeError(f"the run did not pass every feature (exit {measure.exit_code}): {measure.warnings}")
    own = measure.wall_s - measure.http_s - measure.check_s
    return {
        "features": measure.features,
        "overhead_ms_per_feature": round(1000 * own / measure.features, 2),
        "segments_ms_per_feature": _segments(measure.marks),
        "segments_cpu_ms_per_feature": _cpu_segments(measure.marks),
        "wall_s": round(measure.wall_s, 2),
        "model_calls_s": round(measure.http_s, 2),
        "checks_s": round(measure.check_s, 2),
        "model_calls": measure.http_calls,
        "fsync_ms_per_feature": round(1000 * measure.fsync_s / measure.features, 2),
        "fsyncs_per_feature": round(measure.fsyncs / measure.features, 2),
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "context_tokens": {str(k): v for k, v in sorted(measure.injection_tokens.items())},
        "max_context_tokens": measure.max_injection_tokens,
        "warnings": measure.warnings,
    }


def _segments(marks: list[Any]) -> list[float]:
    """Overhead per feature in each tenth of the run, first to last (empty for short runs).
    Each tenth has the same share of summarizations, so a rising series means growth."""
    if len(marks) < 10 * SEGMENTS:
        return []
    size = len(marks) // SEGMENTS
    out = []
    previous = None
    for end in range(size - 1, len(marks), size):
        mark = marks[end]
        wall, http, check = (mark.wall, mark.http, mark.check) if previous is None else (
            mark.wall - previous.wall, mark.http - previous.http, mark.check - previous.check)
        out.append(round(1000 * (wall - http - check) / size, 2))
        previous = mark
    return out


def _cpu_segments(marks: list[Any]) -> list[float]:
    """The run's own CPU time per feature in each tenth (model calls' client side included, the
    checks' processes not): unlike the wall-clock series above, the machine's load does not
    inflate it, so a rise here is the loop's own growth."""
    if len(marks) < 10 * SEGMENTS:
        return []
    size = len(marks) // SEGMENTS
    ends = [marks[end].cpu for end in range(size - 1, len(marks), size)]
    starts = [0.0, *ends[:-1]]
    return [round(1000 * (end - start) / size, 2) for start, end in zip(starts, ends, strict=True)]


def main() -> int:
    parser = argparse.ArgumentParser(prog="python3 -m bench.overhead", description="one measured run (a child of bench/run.py)")
    parser.add_argument("--project", type=Path, required=True)
    parser.add_argument("--spec", type=Path, required=True)
    parser.add_argument("--url", required=True, help="the fake API's base URL")
    parser.add_argument("--sample", default="", help="feature positions whose injection size is noted, e.g. 10,100")
    args = parser.parse_args()
    positions = tuple(int(p) for p in args.sample.split(",") if p)
    print(json.dumps(_child(args.project, args.spec, args.url, positions)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
