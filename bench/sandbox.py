"""What the bubblewrap sandbox adds to each command: its start-up, at the median and p95.

    python3 -m bench.sandbox [RUNS]        # default 100 commands each way

Runs `bash -c true` through `run_in_group` (what the agent's bash tool and the checks use),
RUNS times without a sandbox and RUNS times under `bwrap`, interleaved so that the machine's
load falls on both alike, and prints one line of JSON: wall time per command (median, p95)
each way, and the difference of the medians and of the p95s. The `bare_` figures start the
same command with `subprocess.run` alone, without the process-group machinery around it
(the clean-up scan of /proc after each command): bwrap's own start-up, undiluted. A command that does work takes
that work's time on top, the same in both; `/tmp` as a fresh tmpfs and the home hidden are
part of what is measured. Exits 2 when bubblewrap cannot run here.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from orchestrator.safety.environment import CommandEnvironment  # noqa: E402
from orchestrator.safety.bubblewrap.sandbox import NO_SANDBOX, Sandbox, SandboxUnavailable, choose_sandbox  # noqa: E402
from orchestrator.safety.processes.process_group import run_in_group  # noqa: E402


def _time_one(project: Path, sandbox: Sandbox) -> float:
    started = time.perf_counter()
    finished = run_in_group("true", CommandEnvironment(project, sandbox, dict(os.environ)), timeout=30, on_output=lambda _chunk: None)
    elapsed = time.perf_counter() - started
    if finished.exit_code != 0:
        raise SystemExit(f"bench: the command failed under {sandbox.kind} (exit {finished.exit_code})")
    return elapsed


def _time_bare(project: Path, sandbox: Sandbox) -> float:
    """The same command started and waited for with nothing around it: bwrap's own start-up."""
    started = time.perf_counter()
    subprocess.run(sandbox.wrap(["bash", "-c", "true"], project), cwd=project, check=True, stdin=subprocess.DEVNULL)
    return time.perf_counter() - started


def _p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    with tempfile.TemporaryDirectory(prefix="orchestrate-bench-sandbox-") as tmp:
        project = Path(tmp)
        (project / ".git").mkdir()  # protected mounts are part of the cost
        (project / ".autonomous").mkdir()
        try:
            sandbox = choose_sandbox("bwrap", project)
        except SandboxUnavailable as err:
            print(f"bench: {err}", file=sys.stderr)
            return 2
        samples: dict[str, list[float]] = {"none": [], "bwrap": [], "bare_none": [], "bare_bwrap": []}
        for _ in range(3):  # warm the page cache and bwrap's binary
            _time_one(project, NO_SANDBOX), _time_one(project, sandbox)
        for _ in range(runs):
            samples["none"].append(_time_one(project, NO_SANDBOX))
            samples["bwrap"].append(_time_one(project, sandbox))
            samples["bare_none"].append(_time_bare(project, NO_SANDBOX))
            samples["bare_bwrap"].append(_time_bare(project, sandbox))
    result: dict[str, float] = {"runs": runs}
    for name, values in samples.items():
        result[f"{name}_median_ms"] = round(statistics.median(values) * 1000, 2)
        result[f"{name}_p95_ms"] = round(_p95(values) * 1000, 2)
    for prefix in ("", "bare_"):
        for stat in ("median", "p95"):
            added = result[f"{prefix}bwrap_{stat}_ms"] - result[f"{prefix}none_{stat}_ms"]
            result[f"{prefix}overhead_{stat}_ms"] = round(added, 2)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
