"""What the Unix-socket filter and the proxy's bridge add to each sandboxed command (issue 28).

    python3 -m bench.sandbox_filter [RUNS]     # default 60 commands each way

Starts `bash -c true` with `subprocess.run` RUNS times each way, interleaved so the machine's
load falls on all alike: bubblewrap alone (the argv as it was before issue 28), bubblewrap with
the seccomp filter (`sh` opens it, `bwrap --seccomp` installs it: what every sandboxed command
now pays), and with `[sandbox] allow_hosts` set (then Python's `sandbox_init` forks the bridge
and installs the filter: a Python start-up per command). Prints one line of JSON: the median
and p95 wall time of each, and what the filter and the bridge add at the median. Left out: the
proxy's start (once per process) and any traffic through it. Exits 2 when bubblewrap cannot run.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from orchestrator.safety.bubblewrap.sandbox import SandboxUnavailable, choose_sandbox  # noqa: E402

COMMAND = ["bash", "-c", "true"]


def _bwrap_alone(argv: list[str]) -> list[str]:
    """`argv` without the filter: bubblewrap alone, without `sh` opening the filter for `--seccomp`."""
    at = argv.index("--seccomp") - 1
    return [argv[at], *argv[at + 3:]]


def _time(argv: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(argv, cwd=cwd, check=True, stdin=subprocess.DEVNULL)
    return time.perf_counter() - started


def _p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 60
    with tempfile.TemporaryDirectory(prefix="orchestrate-bench-filter-") as tmp:
        project = Path(tmp)
        try:
            plain = choose_sandbox("bwrap", project)
            proxied = choose_sandbox("bwrap", project, allow_hosts=["pypi.org"])
        except SandboxUnavailable as err:
            print(f"bench: {err}", file=sys.stderr)
            return 2
        argvs = {"bwrap_alone": _bwrap_alone(plain.wrap(COMMAND, project)), "filter": plain.wrap(COMMAND, project),
                 "filter_and_bridge": proxied.wrap(COMMAND, project)}
        samples: dict[str, list[float]] = {name: [] for name in argvs}
        for _ in range(3):  # warm the page cache
            for argv in argvs.values():
                _time(argv, project)
        for _ in range(runs):
            for name, argv in argvs.items():
                samples[name].append(_time(argv, project))
    result: dict[str, float] = {"runs": runs}
    for name, values in samples.items():
        result[f"{name}_median_ms"] = round(statistics.median(values) * 1000, 2)
        result[f"{name}_p95_ms"] = round(_p95(values) * 1000, 2)
    result["filter_adds_median_ms"] = round(result["filter_median_ms"] - result["bwrap_alone_median_ms"], 2)
    result["bridge_adds_median_ms"] = round(result["filter_and_bridge_median_ms"] - result["filter_median_ms"], 2)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
