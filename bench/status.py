"""Issue 13, item 20: `orchestrate status` on a large run.

A state of N features (a third failed, with a reason, the rest passed) is saved as a run
leaves it, and `python3 -m orchestrator status` runs on it in a process of its own, its output
going to a file, as in a pipe: the seconds are the whole command's, start-up included, as
wall time and as the CPU time the process used (steadier on a shared machine).
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.fake_server import REPO_ROOT
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.state import StateStore
from orchestrator.store.run_state import FeatureState
from orchestrator.store.run_state import RunState
from orchestrator.llm.costs.pricing import TokenUsage


def measure(counts: tuple[int, ...]) -> dict[str, Any]:
    return {str(count): _measure(count) for count in counts}


def _measure(count: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="orchestrate-bench-status-") as tmp:
        root = Path(tmp)
        paths = ProjectPaths.for_project(root)
        StateStore(paths).save(_state(count))
        command = [sys.executable, "-m", "orchestrator", "status", "--project-dir", str(root)]
        with open(root / "status.txt", "w", encoding="utf-8") as out:
            cpu_before = _children_cpu()
            start = time.perf_counter()
            done = subprocess.run(command, cwd=REPO_ROOT, stdout=out, stderr=subprocess.PIPE, text=True,
                                  env={**os.environ, "NO_COLOR": "1"}, check=False)
            seconds = time.perf_counter() - start
            cpu = _children_cpu() - cpu_before
        if done.returncode != 0:
            raise RuntimeError(f"status failed on {count} features: {done.stderr[-2000:]}")
        return {"features": count, "seconds": round(seconds, 2), "cpu_seconds": round(cpu, 2),
                "state_mb": round(paths.state_file.stat().st_size / 2**20, 1)}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _state(count: int) -> RunState:
    state = RunState()
    for number in range(1, count + 1):
        failed = number % 3 == 0
        state.features[f"feat-{number:06d}"] = FeatureState(
            status="failed" if failed else "passed", attempts=3 if failed else 1, started_at=1_795_431_686_925,
            completed_at=1_795_431_687_925, iteration=number, text_hash="c" * 64, cost_usd=0.0123,
            duration_ms=1000, tokens=TokenUsage(input=1234, output=2345, cache_read=3456, cache_write=4567),
            reason="check still failing after 3 attempt(s)" if failed else None,
        )
    return state
