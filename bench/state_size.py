"""What the run state weighs at scale, with and without check output.

The overhead benchmark's checks are `true`, which print nothing. A real check (pytest)
prints, and each feature's state keeps the tail of its last check's output (up to 4000
characters, `lastVerification.output`). This builds the state a run of `features` passed
features leaves, with outputs of a given length, and measures it in memory (Python
allocations, traced) and as a snapshot: file size and the extra memory and time a save takes.
"""

from __future__ import annotations

import gc
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from orchestrator.paths import ProjectPaths
from orchestrator.state import FeatureState, RunState, StateStore
from orchestrator.usage import TokenUsage
from orchestrator.verify import DEFAULT_OUTPUT_LIMIT

MB = 1024 * 1024


def measure(features: int = 10_000, output_chars: tuple[int, ...] = (0, DEFAULT_OUTPUT_LIMIT)) -> dict[str, Any]:
    return {str(chars): _measure(features, chars) for chars in output_chars}


def _measure(features: int, output_chars: int) -> dict[str, Any]:
    gc.collect()
    tracemalloc.start()
    try:
        state = _state(features, output_chars)
        in_memory = tracemalloc.get_traced_memory()[0]
        with tempfile.TemporaryDirectory(prefix="orchestrate-bench-state-") as tmp:
            paths = ProjectPaths.for_project(Path(tmp))
            tracemalloc.reset_peak()
            started = time.perf_counter()
            StateStore(paths).save(state)
            seconds = time.perf_counter() - started
            save_peak = tracemalloc.get_traced_memory()[1] - in_memory
            size = paths.state_file.stat().st_size
    finally:
        tracemalloc.stop()
    return {
        "features": features,
        "state_mb": round(in_memory / MB, 1),
        "snapshot_mb": round(size / MB, 1),
        "save_extra_mb": round(save_peak / MB, 1),
        "save_s": round(seconds, 2),
    }


def _state(features: int, output_chars: int) -> RunState:
    """The state of a run whose `features` features all passed at the first attempt."""
    state = RunState()
    for number in range(1, features + 1):
        output = f"{number} passed " + "." * max(0, output_chars - 20)
        state.features[f"feat-{number:05d}"] = FeatureState(
            status="passed", attempts=1, started_at=1_795_431_686_925, completed_at=1_795_431_687_925,
            iteration=number, text_hash="c" * 64, cost_usd=0.0123, duration_ms=1000,
            tokens=TokenUsage(input=1234, output=2345, cache_read=3456, cache_write=4567),
            last_verification={
                "command": "pytest -q", "success": True, "exitCode": 0, "output": output[:output_chars],
                "error": None, "skipped": False, "attempt": 1,
            },
        )
    return state
