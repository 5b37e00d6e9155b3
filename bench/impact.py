"""Issue 44: what `--jobs 4` costs against a serial run when features share a file.

    python3 bench/impact.py [--features 12] [--shares 0,50,100] [--jobs 1,4] [--latency 0.7]

A mixed spec of F features: a share of them (0%, 50%, 100%) each append a line to one shared
file (`shared.txt`; their descriptions say so, and their checks grep their line), the others are
independent (the fake's default plan: a file of their own). Every model call takes `--latency`
seconds (the fake's `latency`). For each share and each `--jobs N` it runs the real CLI in a
fresh git project and prints the model calls (agent calls, conflict steps, summaries), the run's
own duration (`run_finished.durationMs`), each against the serial run, and the footprint
prediction's hit rate as `orchestrate` recorded it (each passed feature's `prediction` in the state), and checks
that every feature passed with one checkpoint each.

12 features, 50%, 0.7 s a call is the issue's measurement (serial: 30 calls, 30 s); the target
is `--jobs 4` at most 1.15x the serial calls and 0.6x its time, and the same at 100 features.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from bench.parallel import warm_up_fake  # noqa: E402
from fake_messages_api.scripted_agent.plans import bash, report  # noqa: E402
from tests.cli_helpers import run_cli, write_spec  # noqa: E402
from tests.fake_api_fixtures import running_fake_api  # noqa: E402


def shared_ids(features: int, share: int, layout: str = "spread") -> list[str]:
    """Which features append to the shared file: `share`% of them, spread through the spec
    (`spread`) or listed first (`first`)."""
    count = round(features * share / 100)
    if count == 0:
        return []
    step = features / count if layout == "spread" else 1
    return [f"feat-{int(i * step) + 1:02d}" for i in range(count)]


def mixed_spec(base: Path, features: int, shared: list[str]) -> Path:
    extra = {
        fid: {"description": f"Append the line 'line {fid}' to shared.txt, keeping the lines already there.",
              "acceptance": [f"shared.txt holds the line 'line {fid}'"],
              # The check reads the file under a name it does not spell out: a file a check names
              # is protected from the agent (`check_paths`), as in bench/conflict_cost.py.
              "verify": f"grep -qx 'line {fid}' \"$(echo share)d.txt\"", "max_attempts": 6}
        for fid in shared
    }
    return write_spec(base, features, extra=extra)


def run_once(features: int, share: int, jobs: int, latency: float, layout: str) -> dict[str, Any]:
    shared = shared_ids(features, share, layout)
    with tempfile.TemporaryDirectory(prefix="impact-") as scratch, running_fake_api(latency=latency) as fake:
        base = Path(scratch)
        spec = mixed_spec(base, features, shared)
        for fid in shared:
            fake.plans[fid] = [[bash(f"echo 'line {fid}' >> shared.txt")], [report(f"appended line {fid}")]]
        root = base / "project"
        root.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        started = time.monotonic()
        result = run_cli(["run", str(spec), "--jobs", str(jobs), "--json"], cwd=root, fake=fake, timeout=3600)
        wall = time.monotonic() - started
        state = json.loads((root / ".autonomous/state/execution-state.json").read_text())
        statuses = [entry["status"] for entry in state["features"].values()]
        commits = subprocess.run(["git", "log", "--format=%s"], cwd=root, capture_output=True, text=True).stdout
        finished = [e for e in result.events() if e["type"] == "run_finished"]
        scored = [e["prediction"] for e in state["features"].values() if "changed" in e.get("prediction", {})]
        changed = sum(p["changed"] for p in scored)
        return {
            "features": features, "share": share, "jobs": jobs, "exit": result.code,
            "calls": fake.calls, "conflict_steps": len(fake.forced_tool_calls),
            "run_s": finished[-1]["durationMs"] / 1000 if finished else wall, "wall_s": round(wall, 1),
            # A feature's checkpoint (`--jobs` adds one commit of the project as it found it, first).
            "passed": statuses.count("passed"),
            "checkpoints": sum(line.startswith("orchestrate: feat-") for line in commits.splitlines()),
            "hit_rate": sum(p["hits"] for p in scored) / changed if changed else None,
            "missed_conflicts": sum(not c["foreseen"] for p in scored for c in p.get("conflicts", [])),
            "attempts": sum(entry.get("attempts", 0) for entry in state["features"].values()),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--features", type=int, default=12)
    parser.add_argument("--shares", default="0,50,100", help="percentages of features appending to the shared file")
    parser.add_argument("--jobs", default="1,4")
    parser.add_argument("--layout", choices=("spread", "first"), default="spread",
                        help="shared features spread through the spec, or listed first")
    parser.add_argument("--latency", type=float, default=0.7, help="seconds each fake model call takes")
    args = parser.parse_args()
    warm_up_fake()
    rows: list[dict[str, Any]] = []
    for share in (int(s) for s in args.shares.split(",")):
        for jobs in (int(n) for n in args.jobs.split(",")):
            row = run_once(args.features, share, jobs, args.latency, args.layout)
            serial = next((r for r in rows if r["share"] == share and r["jobs"] == 1), row)
            row["calls_x"] = round(row["calls"] / serial["calls"], 2)
            row["time_x"] = round(row["run_s"] / serial["run_s"], 2)
            rows.append(row)
            print(json.dumps(row), flush=True)
    print(f"\n{args.features} features, {args.latency} s a call")
    print("| shared | --jobs | calls | x serial | conflict steps | attempts | run (s) | x serial | passed | checkpoints "
          "| hit rate |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        rate = "n/a" if r["hit_rate"] is None else f"{100 * r['hit_rate']:.0f}%"
        print(f"| {r['share']}% | {r['jobs']} | {r['calls']} | {r['calls_x']:.2f} | {r['conflict_steps']} | "
              f"{r['attempts']} | {r['run_s']:.1f} | {r['time_x']:.2f} | {r['passed']}/{r['features']} | "
              f"{r['checkpoints']} | {rate} |")


if __name__ == "__main__":
    main()
