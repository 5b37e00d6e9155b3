"""HTML report, `status` and `logs` at 10,000 features: generation time and page size.

    python bench/report_10k.py

Builds a synthetic project (state, events.jsonl with 3 events per feature plus an api_call,
a small log per feature, no working memory), then times `orchestrate report --html`, `status` and
`logs` as subprocesses (interpreter start and imports included), the median of five runs each.
Python compiles the modules again at each start where no bytecode cache is written
(`PYTHONDONTWRITEBYTECODE`, as on the machine of docs/benchmarks.md): an installed package has
its cache, and starts faster.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
N = 10_000


def _project(root: Path) -> None:
    state_dir, autonomous = root / ".autonomous/state", root / ".autonomous"
    state_dir.mkdir(parents=True)
    usage = {"input": 100, "output": 50, "cacheRead": 2000, "cacheWrite": 300}
    features = {f"feat-{i:05d}": {"status": "failed" if i % 50 == 0 else "passed", "attempts": 1, "tokens": usage,
                                 "costUsd": 0.01, "durationMs": 900} for i in range(N)}
    (state_dir / "execution-state.json").write_text(json.dumps({"version": 1, "runId": "bench", "features": features}))
    logs = autonomous / "logs"
    logs.mkdir()
    for fid, entry in features.items():
        (logs / f"{fid}.json").write_text(json.dumps({"id": fid, "name": fid, "category": "x", **entry}))
    with (autonomous / "events.jsonl").open("w") as out:
        for i, fid in enumerate(features):
            ts = 1_000_000 + i * 1000
            for event in ({"type": "feature_started", "ts": ts, "id": fid, "attempt": 1},
                          {"type": "api_call", "ts": ts + 400, "feature": fid, "usage": usage},
                          {"type": "verification", "ts": ts + 800, "id": fid, "success": i % 50 != 0},
                          {"type": "feature_finished", "ts": ts + 900, "id": fid, "status": "passed"}):
                out.write(json.dumps(event) + "\n")


def _timed(*args: str, runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "orchestrator", *args], check=True, capture_output=True, cwd=ROOT)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "p"
        _project(project)
        html = Path(tmp) / "report.html"
        report_s = _timed("report", "--html", str(html), "--project-dir", str(project))
        status_s = _timed("status", "--project-dir", str(project))
        logs_s = _timed("logs", "--project-dir", str(project))
        print(f"report --html at {N:,} features: {report_s:.2f}s, {html.stat().st_size / 1024:.0f} KiB")
        print(f"status at {N:,} features: {status_s:.2f}s; logs: {logs_s:.2f}s (subprocess, imports included)")
        print(f"python start alone (`--version`): {_timed('--version'):.2f}s")


if __name__ == "__main__":
    main()
