"""What the run state weighs at scale, with and without check output.

The overhead benchmark's checks are `true`, which print nothing. A real check (pytest)
prints, and each feature's last check's output (up to 4000 characters, `lastVerification.
output`) is in memory. This builds the state a run of `features` passed features leaves, with
outputs of a given length, and measures it in memory (Python allocations, traced) and as a
snapshot: file size and the extra memory and time a save takes.

`failed_snapshot` builds the state of a long run in which every feature failed its check
three times, loudly, and says whether its snapshot stays under the state's own read limit.
"""

from __future__ import annotations

import gc
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.state import MAX_STATE_BYTES, StateStore
from orchestrator.store.run_state import FeatureState
from orchestrator.store.run_state import RunState
from orchestrator.llm.costs.pricing import TokenUsage
from orchestrator.run.checks.running.check_command import DEFAULT_OUTPUT_LIMIT

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


def failed_snapshot(features: int) -> dict[str, Any]:
    """The snapshot of `features` failed features whose checks printed the full tail, and the
    time to load it back (None when it is over `MAX_STATE_BYTES`: the next run sets it aside)."""
    state = RunState()
    for number in range(1, features + 1):
        state.features[f"feat-{number:06d}"] = FeatureState(
            status="failed", attempts=3, started_at=1_795_431_686_925, completed_at=1_795_431_687_925,
            iteration=number, text_hash="c" * 64, cost_usd=0.0123, duration_ms=1000,
            tokens=TokenUsage(input=1234, output=2345, cache_read=3456, cache_write=4567),
            reason="check still failing after 3 attempt(s)",
            last_verification={
                "command": f"pytest -q tests/test_feature_{number}.py", "success": False, "exitCode": 1,
                "output": "E   AssertionError: expected 3 items, got 2\n" * (DEFAULT_OUTPUT_LIMIT // 44),
                "error": None, "skipped": False, "attempt": 3,
            },
        )
    with tempfile.TemporaryDirectory(prefix="orchestrate-bench-state-") as tmp:
        paths = ProjectPaths.for_project(Path(tmp))
        StateStore(paths).save(state)
        del state
        size = paths.state_file.stat().st_size
        started = time.perf_counter()
        loaded = StateStore(paths).load() if size <= MAX_STATE_BYTES else None
        load_s = time.perf_counter() - started
    return {"features": features, "snapshot_mb": round(size / MB, 1), "limit_mb": MAX_STATE_BYTES // MB,
            "load_s": round(load_s, 2) if loaded is not None else None}
