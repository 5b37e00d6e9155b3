"""Final verification's wall time with real pytest checks: one process per check in the working
tree (before issue 29 item 3 and issue 28 break 9) against a clean checkout of the final commit
with the checks batched several to a pytest process (after).

A git project of N features, each a module `pkg/fNNNN.py` and its test `tests/test_fNNNN.py`,
all committed; every feature's check is `python3 -m pytest -q tests/test_fNNNN.py`. Prints, for
each N: the clean checkout's own time (worktree add, bytecode dropped, removal), final
verification after (checkout included), and before (measured up to --before-up-to features,
estimated above it as N x the measured time per check).

    python3 bench/final_verify.py [--features 100 300 1000] [--before-up-to 300]

Leaves out: the model, the agent, and the rest of a run; test bodies are trivial, so the figures
are interpreter starts, collection and git, which is what batching and the checkout change.
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
from orchestrator.run.checks.clean_checkout import WORKING_TREE, VerificationTree, verification_tree  # noqa: E402
from orchestrator.run.checks.final_verification import verify_passed  # noqa: E402
from orchestrator.run.checks.running.check_command import run_check  # noqa: E402
from shared_base.check_result import CheckResult
from orchestrator.safety.environment import CommandEnvironment  # noqa: E402
from orchestrator.safety.bubblewrap.sandbox import NO_SANDBOX  # noqa: E402
from orchestrator.spec.feature_spec import FeatureSpec  # noqa: E402
from orchestrator.store.run_state import FeatureState, RunState  # noqa: E402


def _project(root: Path, count: int) -> tuple[FeatureSpec, RunState]:
    (root / "pkg").mkdir()
    (root / "tests").mkdir()
    (root / "pkg/__init__.py").write_text("")
    (root / ".gitignore").write_text("__pycache__/\n.autonomous/\n")
    features = []
    state = RunState()
    for i in range(count):
        fid = f"f{i:04d}"
        (root / f"pkg/{fid}.py").write_text(f"def value():\n    return {i}\n")
        (root / f"tests/test_{fid}.py").write_text(
            f"from pkg.{fid} import value\n\n\ndef test_value():\n    assert value() == {i}\n"
        )
        features.append({"id": fid, "name": fid, "description": "d", "verify": f"python3 -m pytest -q tests/test_{fid}.py"})
        state.features[fid] = FeatureState(status="passed")
    for command in (["init", "-q"], ["add", "-A"], ["-c", "user.name=b", "-c", "user.email=b@x", "commit", "-qm", "all"]):
        subprocess.run(["git", *command], cwd=root, check=True)
    return FeatureSpec.model_validate({"project": "bench", "features": features}), state


def _one_process_each(command: str, workspace: Path) -> CheckResult:
    """Today's runner before batching: every check its own process (a plain function: never batched)."""
    return run_check(command, _environment(workspace), attempt=0, timeout=600.0)


def _environment(workspace: Path) -> CommandEnvironment:
    return CommandEnvironment(workspace, NO_SANDBOX, dict(os.environ))


def _before(root: Path, spec: FeatureSpec, state: RunState, cores: int) -> float:
    started = time.monotonic()
    runs = verify_passed(VerificationTree(root, WORKING_TREE), spec, state, runner=_one_process_each, concurrency=cores)
    assert all(run.success for run in runs), [run.result.output for run in runs if not run.success][:1]
    return time.monotonic() - started


def _after(root: Path, spec: FeatureSpec, state: RunState, cores: int) -> tuple[float, float]:
    started = time.monotonic()
    with verification_tree(root, root / ".autonomous/verify", committed=True, on_warning=print) as tree:
        assert tree.commit is not None
        checked_out = time.monotonic() - started
        runs = verify_passed(tree, spec, state, runner=check_runner(_environment(root), 600.0), concurrency=cores)
    assert all(run.success for run in runs), [run.result.output for run in runs if not run.success][:1]
    return time.monotonic() - started, checked_out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--features", type=int, nargs="+", default=[100, 300, 1000])
    parser.add_argument("--before-up-to", type=int, default=300)
    args = parser.parse_args()
    cores = default_concurrency()
    print(f"cores: {cores}; checks: python3 -m pytest -q tests/test_fNNNN.py, one trivial test each")
    per_check: float | None = None
    for count in args.features:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            spec, state = _project(root, count)
            after, checkout = _after(root, spec, state, cores)
            if count <= args.before_up_to:
                before = _before(root, spec, state, cores)
                per_check = before / count
                shown = f"{before:7.1f} s"
            else:
                before = (per_check or 0.0) * count
                shown = f"{before:7.1f} s (estimated: {count} x {per_check or 0.0:.2f} s)"
            print(f"N={count:5d}: after {after:6.1f} s (clean checkout {checkout:5.2f} s of it); "
                  f"before {shown}; {before / after:5.1f}x faster")


if __name__ == "__main__":
    main()
