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
from pathlib import Path
from statistics import mean
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from tests.cli_helpers import run_cli  # noqa: E402
from fake_messages_api.scripted_agent.agent_turn import AgentTurn  # noqa: E402
from fake_messages_api.scripted_agent.plans import bash, report, text
from tests.fake_api_fixtures import running_fake_api  # noqa: E402

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


def _cost_usd(root: Path) -> float:
    """The run's dollars as `status` reports them (the state's totals, the fake's pricing)."""
    state = json.loads((root / ".autonomous/state/execution-state.json").read_text())
    return float(state["totals"]["costUsd"])


def _window(values: list[float], late: bool) -> float:
    """The mean over the second to fourth tenths (early) or the seventh to ninth (late): the first
    and the last tenth hold the start-up and, under `--jobs 4`, the workers filling up and
    draining (the last features finish in one merge batch)."""
    size = max(len(values) // 10, 1)
    chosen = values[6 * size:9 * size] if late else values[size:4 * size]
    return mean(chosen) if chosen else 0.0


def per_feature(running: list[float], late: bool) -> float:
    """What a feature cost over a window of the run, from a running total read as each feature
    finished (its time, or the run's CPU time so far): the total's rise across the window over the
    features in it. Three tenths wide (30 features at N = 100, several merge batches under
    `--jobs 4`), so that a window never falls inside one batch, as one tenth's mean gap did."""
    size = max(len(running) // 10, 1)
    first, last = (6 * size, 9 * size) if late else (size, 4 * size)
    last = min(last, len(running) - 1)
    return (running[last] - running[first - 1]) / (last - first + 1) if last >= first >= 1 else 0.0


def _flat(name: str, running: list[float], scale: float, digits: int = 3) -> dict[str, Any]:
    early, late = per_feature(running, late=False) / scale, per_feature(running, late=True) / scale
    return {f"{name}_early": round(early, digits), f"{name}_late": round(late, digits),
            f"{name}_late_over_early": round(late / early, 2) if early else None}


def _run(case: str, count: int) -> tuple[Any, list[dict[str, Any]], int, float]:
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
        return result, _events(root), sum(fake.ledger.kind_calls.values()), _cost_usd(root)


def measure(case: str, count: int, save: Path | None = None) -> dict[str, Any]:
    result, events, calls, dollars = _run(case, count)
    done = sorted((e for e in events if e["type"] == "feature_finished"), key=lambda e: e["ts"])
    finished = [float(e["ts"]) for e in done]
    order = [e["id"] for e in done]
    checks: dict[str, int] = {}
    for e in events:
        if e["type"] == "regression_check":
            checks[e["id"]] = checks.get(e["id"], 0) + 1
    rechecks = [float(checks.get(fid, 0)) for fid in order]
    guard_ms = {e["id"]: e["durationMs"] / 1000 for e in events if e["type"] == "regression_summary"}
    guard = [guard_ms.get(fid, 0.0) for fid in order]
    deferred = sum(e["deferred"] for e in events if e["type"] == "regression_summary")
    final = [e for e in events if e["type"] == "final_verification"]
    run = [e for e in events if e["type"] == "run_finished"]
    size = max(count // 10, 1)
    middle = finished[size - 1:9 * size]  # features finished per minute over the second to ninth tenths
    if save is not None:  # the finishing times and CPU, for another look at the same run
        (save / f"{case}-{count}.json").write_text(json.dumps({"finished": done, "rechecks": rechecks}))
    return {
        "case": case, "features": count, "exit": result.code,
        **_flat("feature_s", finished, 1000), **_flat("cpu_ms", [float(e.get("cpuMs", 0)) for e in done], 1, 1),
        **_flat("children_cpu_ms", [float(e.get("childrenCpuMs", 0)) for e in done], 1, 1),
        "features_per_min_middle": round((len(middle) - 1) * 60_000 / (middle[-1] - middle[0]), 1)
        if len(middle) > 1 and middle[-1] > middle[0] else None,
        "rechecks_early": round(_window(rechecks, late=False), 2), "rechecks_late": round(_window(rechecks, late=True), 2),
        "guard_s_early": round(_window(guard, late=False), 3), "guard_s_late": round(_window(guard, late=True), 3),
        "deferred_total": deferred,
        "final_verification_s": round(final[0]["durationMs"] / 1000, 1) if final else None,
        "run_s": round(run[-1]["durationMs"] / 1000, 1) if run else None,
        "calls_per_feature": round(calls / count, 2), "usd_per_feature": round(dollars / count, 5),
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
