"""What the figures were measured on: CPUs, Python, and how busy and how fast the disk was."""

from __future__ import annotations

import os
import platform
import statistics
import tempfile
import time
from typing import Any


def describe(scratch: str | None = None) -> dict[str, Any]:
    return {
        "cpus": os.cpu_count(),
        "cpu_model": _cpu_model(),
        "python": platform.python_version(),
        "system": f"{platform.system()} {platform.release()}",
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "fsync_ms_median": fsync_latency_ms(scratch),
    }


def fsync_latency_ms(directory: str | None = None, samples: int = 100) -> float:
    """Median time to write and fsync 1 KB: the orchestrator fsyncs about 7 times a feature,
    so this disk figure weighs on the overhead as much as the code does."""
    times = []
    with tempfile.TemporaryDirectory(prefix="orchestrate-bench-fsync-", dir=directory) as tmp:
        path = os.path.join(tmp, "probe")
        for _ in range(samples):
            start = time.perf_counter()
            with open(path, "w") as handle:
                handle.write("x" * 1024)
                handle.flush()
                os.fsync(handle.fileno())
            times.append(time.perf_counter() - start)
    return round(1000 * statistics.median(times), 2)


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"
