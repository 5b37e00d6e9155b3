"""Issue 29: does a feature cost the same at the end of a long run as at its start, in every mode?

    python3 bench/scale_1000.py [--features 100 300 1000] [--cases all | git-shared-j4,...] [--save DIR]

Eight cases: a project that is not a git repository (`--no-commit`; under `--jobs 4`, which
needs commits, the run makes the plain directory a repository, as the CLI does) or a git one;
independent features (each writes its own file) or features that all append a line to one
shared file (`registry.txt`, as a route table or a registry grows); serial or `--jobs 4`. Each
feature is two instant model calls (the fake's) and a check that is one shell command.

Per case and N it runs the real CLI in a fresh project and prints, from the run's events:
- per-feature orchestrator time: the mean gap between features finishing, over the second and
  third tenths of the features (early) and the eighth and ninth (late), and late/early (the
  target: at most 1.3);
- regression checks run per feature and the guard's time per feature (early and late; under
  `--jobs 4` a merge batch's whole re-check, own checks included, counts for each of its
  features), and how many affected checks the guard deferred in the whole run;
- final verification's time (every passed check on the final tree) and the whole run's;
- model calls per feature (conflict steps under `--jobs 4` included).

Leaves out: the model's own time (the fake answers at once, so everything measured is the
orchestrator's, the checks' and git's), process start-up, and the machine's load (shared: run
it twice and keep the lower figures). `--features 20` is a quick check of the bench itself.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from itertools import pairwise
from pathlib import Path
from statistics import mean
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from tests.cli_helpers import run_cli  # noqa: E402
from tests.fake_api import AgentTurn, bash, report, text  # noqa: E402
from tests.fake_api.fixtures import running_fake_api  # noqa: E402

CASES = [f"{repo}-{shape}-{jobs}" for repo in ("nogit", "git") for shape in ("independent", "shared")
         for jobs in ("serial", "j4")]


def _plan(shape: str) -> Any:
    def plan(turn: AgentTurn) -> list[dict[str, Any]]:
        fid = turn.feature_id
        if turn.step == 0:
            work = f"echo '{fid}' >> registry.txt" if shape == "shared" else f"mkdir -p f && echo done > f/{fid}.txt"
            return [bash(work)]
        if turn.step == 1:
            return [report(f"{fid} done")]
        return [text("done")]
    return plan


def _spec(path: Path, count: int, shape: str) -> None:
    # The shared file's name is spelt at run time: a file a check names is protected from the agent.
    check = "grep -qx '{id}' \"$(echo registr)y.txt\"" if shape == "shared" else "test -f f/{id}.txt"
    features = [{"id": f"feat-{i:04d}", "name": f"Part {i}", "description": f"Part {i} of the service.",
                 "verify": check.replace("{id}", f"feat-{i:04d}")} for i in range(1, count + 1)]
    path.write_text(json.dumps({"project": "scale", "description": "A service built part by part.",
                                "features": features}))


def _events(root: Path) -> list[dict[str, Any]]:
    lines = (root / ".autonomous/events.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _window(values: list[float], late: bool) -> float:
    """The mean over the second and third tenths (early) or the eighth and ninth (late): the first
    and the last tenth hold the start-up and, under `--jobs 4`, the workers filling up and
    draining (the last features finish in one merge batch), which say nothing about a feature's
    cost; two tenths, since under `--jobs 4` features finish in bursts (merge batches)."""
    size = max(len(values) // 10, 1)
    chosen = values[-3 * size:-size] if late else values[size:3 * size]
    return mean(chosen) if chosen else 0.0


def measure(case: str, count: int, save: Path | None = None) -> dict[str, Any]:
    repo, shape, jobs = case.split("-")
    with running_fake_api(default_plan=_plan(shape), keep_requests=20) as fake, \
            tempfile.TemporaryDirectory(prefix="scale-") as tmp:
        root = Path(tmp) / "project"
        root.mkdir()
        if repo == "git":
            for args in (["init", "-q"], ["-c", "user.name=b", "-c", "user.email=b@x", "commit", "-q", "--allow-empty",
                                          "-m", "init"]):
                subprocess.run(["git", *args], cwd=root, check=True)
        spec = Path(tmp) / "spec.json"
        _spec(spec, count, shape)
        args = ["run", str(spec), "-q", "--summarize-every", "50"]
        args += ["--jobs", "4"] if jobs == "j4" else []
        args += ["--no-commit"] if repo == "nogit" and jobs == "serial" else []
        result = run_cli(args, root, fake, timeout=24 * 3600)
        events = _events(root)
        calls = sum(fake.ledger.kind_calls.values())
    finished = sorted(e["ts"] for e in events if e["type"] == "feature_finished")
    gaps = [(b - a) / 1000 for a, b in pairwise(finished)]
    order = [e["id"] for e in sorted((e for e in events if e["type"] == "feature_finished"), key=lambda e: e["ts"])]
    checks: dict[str, int] = {}
    for e in events:
        if e["type"] == "regression_check":
            checks[e["id"]] = checks.get(e["id"], 0) + 1
    per_feature = [float(checks.get(fid, 0)) for fid in order]
    guard_ms = {e["id"]: e["durationMs"] / 1000 for e in events if e["type"] == "regression_summary"}
    guard = [guard_ms.get(fid, 0.0) for fid in order]
    deferred = sum(e["deferred"] for e in events if e["type"] == "regression_summary")
    final = [e for e in events if e["type"] == "final_verification"]
    run = [e for e in events if e["type"] == "run_finished"]
    early, late = _window(gaps, late=False), _window(gaps, late=True)
    if save is not None:  # the finishing times, for another look at the same run
        (save / f"{case}-{count}.json").write_text(json.dumps({"finished_ms": finished, "rechecks": per_feature}))
    return {
        "case": case, "features": count, "exit": result.code,
        "feature_s_early": round(early, 3), "feature_s_late": round(late, 3),
        "late_over_early": round(late / early, 2) if early else None,
        "rechecks_early": round(_window(per_feature, late=False), 2), "rechecks_late": round(_window(per_feature, late=True), 2),
        "guard_s_early": round(_window(guard, late=False), 3), "guard_s_late": round(_window(guard, late=True), 3),
        "deferred_total": deferred,
        "final_verification_s": round(final[0]["durationMs"] / 1000, 1) if final else None,
        "run_s": round(run[-1]["durationMs"] / 1000, 1) if run else None,
        "calls_per_feature": round(calls / count, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--features", type=int, nargs="+", default=[100, 300, 1000])
    parser.add_argument("--cases", default="all", help="comma-separated, of: " + ", ".join(CASES))
    parser.add_argument("--save", type=Path, help="write each run's finishing times here")
    args = parser.parse_args()
    cases = CASES if args.cases == "all" else args.cases.split(",")
    for count in args.features:
        for case in cases:
            print(json.dumps(measure(case, count, args.save)), flush=True)


if __name__ == "__main__":
    main()
