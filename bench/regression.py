"""The regression guard's and final verification's cost, with checks that take 0.2 s each.

Prints, for N passed features (default 100 and 1,000): final verification's wall time with
the checks run `check_concurrency` at once (the CPU count) and one at a time, the speed-up,
and the overhead per feature; then the guard's own overhead per feature (finding the changed
files in a git project and choosing the checks, without the checks themselves).

    python3 bench/regression.py [--features 100 1000] [--check-seconds 0.2] [--serial-up-to 100]

Leaves out: the model, the agent, git checkpoints; serial runs above --serial-up-to are
estimated as N x the measured per-check time (200 s at 1,000 features otherwise).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from orchestrator.run.checks.running.check_pool import check_runner, default_concurrency  # noqa: E402
from orchestrator.run.checks.clean_checkout import WORKING_TREE, VerificationTree  # noqa: E402
from orchestrator.run.checks.final_verification import verify_passed  # noqa: E402
from orchestrator.run.checks.guard.footprint import ChangeWatch, TreeLedgers  # noqa: E402
from orchestrator.safety.environment import CommandEnvironment  # noqa: E402
from orchestrator.safety.bubblewrap.sandbox import NO_SANDBOX  # noqa: E402
from orchestrator.run.checks.guard.regression import RegressionGuard  # noqa: E402
from orchestrator.spec.feature_spec import FeatureSpec  # noqa: E402
from orchestrator.store.records import Footprint  # noqa: E402
from orchestrator.store.run_state import FeatureState, RunState  # noqa: E402


def _spec_and_state(count: int, seconds: float) -> tuple[FeatureSpec, RunState]:
    features = [{"id": f"f{i:04d}", "name": "n", "category": "c", "description": "d",
                 "verify": f"sleep {seconds} # {i}"} for i in range(count)]  # distinct commands: none shared
    spec = FeatureSpec.model_validate({"project": "bench", "features": features})
    state = RunState()
    for i in range(count):
        state.features[f"f{i:04d}"] = FeatureState(status="passed", footprint=Footprint(changed=[f"m{i}.py"]))
    return spec, state


def _final(root: Path, count: int, seconds: float, concurrency: int) -> float:
    spec, state = _spec_and_state(count, seconds)
    started = time.monotonic()
    environment = CommandEnvironment(root, NO_SANDBOX, dict(os.environ))
    runs = verify_passed(VerificationTree(root, WORKING_TREE), spec, state, runner=check_runner(environment, 60.0),
                         concurrency=concurrency)
    assert len(runs) == count and all(run.success for run in runs)
    return time.monotonic() - started


def _guard_overhead(count: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        for i in range(50):
            (root / f"m{i}.py").write_text("x = 1\n")
        spec, state = _spec_and_state(count, 0.0)
        guard = RegressionGuard(spec, state, mode="affected", concurrency=1, runner=check_runner(CommandEnvironment(root, NO_SANDBOX, dict(os.environ))))
        feature = spec.features[-1]
        started = time.monotonic()
        rounds = 20
        for _ in range(rounds):
            guard.targets(feature, ChangeWatch(root, by_git=True, trees=TreeLedgers()).changed())
        return (time.monotonic() - started) / rounds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--features", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--check-seconds", type=float, default=0.2)
    parser.add_argument("--serial-up-to", type=int, default=100)
    args = parser.parse_args()
    cores = default_concurrency()
    print(f"cores: {cores}; checks: sleep {args.check_seconds} s")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for count in args.features:
            parallel = _final(root, count, args.check_seconds, cores)
            if count <= args.serial_up_to:
                serial, how = _final(root, count, args.check_seconds, 1), "measured"
            else:
                serial, how = count * _final(root, 10, args.check_seconds, 1) / 10, "estimated from 10"
            print(f"final verification, {count} passed features: {parallel:.1f} s at {cores} at once, "
                  f"{serial:.1f} s one at a time ({how}); {serial / parallel:.2f}x; "
                  f"overhead {1000 * (parallel - count * args.check_seconds / cores) / count:.1f} ms/feature")
            print(f"regression guard overhead (changed files + choosing checks), {count} passed features: "
                  f"{1000 * _guard_overhead(count):.1f} ms/feature")


if __name__ == "__main__":
    main()
