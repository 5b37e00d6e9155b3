"""Issue 29, item 4: what merge conflicts cost under `--jobs 3`, in model calls and dollars.

    python3 bench/conflict_cost.py [--repeats 3]

The spec of tests/e2e/merge/test_conflict_step_e2e.py: six features that each append a line to one shared
file, run through the real CLI against the fake Messages API, once one at a time and once with
`--jobs 3` (where every feature but the first meets a conflict, resolved by the focused
conflict step). Prints, per mode, the model calls (agent calls plus conflict steps), the dollars
as `status` reports them (the state's totals, at the fake's pricing: the fake's token counts,
not a real model's), the attempts, and the `--jobs 3` run over the serial one.

Leaves out: time (the fake answers at once), and how a real model resolves a conflict (the
fake's conflict answer is scripted to keep both lines).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from tests.cli_helpers import run_cli, write_spec  # noqa: E402
from fake_messages_api.scripted_agent.plans import bash, report  # noqa: E402
from tests.fake_api_fixtures import running_fake_api  # noqa: E402

FEATURES = 6


def measure(jobs: int) -> dict[str, Any]:
    """One run of the shared-file spec with `jobs` workers (1: one at a time)."""
    with running_fake_api() as fake, tempfile.TemporaryDirectory(prefix="conflict-") as tmp:
        root = Path(tmp) / "project"
        root.mkdir()
        checks = {f"feat-{i:02d}": {"verify": f"grep -qx 'line {i}' \"$(echo share)d.txt\"", "max_attempts": 6}
                  for i in range(1, FEATURES + 1)}
        spec = write_spec(Path(tmp), FEATURES, extra=checks)
        for i in range(1, FEATURES + 1):
            fake.plans[f"feat-{i:02d}"] = [[bash(f"echo 'line {i}' >> shared.txt")], [report(f"appended line {i}")]]
        args = ["run", str(spec), "--json", *(["--jobs", str(jobs)] if jobs > 1 else [])]
        result = run_cli(args, root, fake, timeout=600)
        state = json.loads((root / ".autonomous/state/execution-state.json").read_text())
        attempts = [e["attempts"] for e in result.events() if e["type"] == "feature_finished"]
        lines = sorted((root / "shared.txt").read_text().splitlines())
        return {
            "jobs": jobs, "exit": result.code, "agent_calls": len(fake.agent_requests()),
            "conflict_steps": len(fake.forced_tool_calls),
            "calls": len(fake.agent_requests()) + len(fake.forced_tool_calls),
            "usd": round(float(state["totals"]["costUsd"]), 5), "attempts": attempts,
            "lines_ok": lines == [f"line {i}" for i in range(1, FEATURES + 1)],  # the same final file
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1)
    for _ in range(parser.parse_args().repeats):
        serial, jobs = measure(1), measure(3)
        for row in (serial, jobs):
            print(json.dumps(row), flush=True)
        print(json.dumps({"calls_jobs3_over_serial": round(jobs["calls"] / serial["calls"], 2),
                          "usd_jobs3_over_serial": round(jobs["usd"] / serial["usd"], 2)}), flush=True)


if __name__ == "__main__":
    main()
