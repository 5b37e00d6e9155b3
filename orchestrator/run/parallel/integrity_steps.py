"""The integrity work (`orchestrator.run.checks.integrity`) plugged into a parallel run's steps.

- The re-check after a merge: the feature's own check on the merged tree, then the regression
  guard over the files the merge changed, so a feature that breaks one merged meanwhile is
  caught there, where the two meet, and fed back.
- The same for a batch of features merged together: their own checks and the guard's, run once.
- `ParallelHooks`: the steps above as a parallel run plugs them, replaceable in tests.
- A worker's `Integrity`: the run's assessment and failed work parked on `orchestrate/failed/<id>`
  from the worker's worktree (which holds nothing of the user's: no start-of-run tree to spare);
  its re-checks wait for the merge, since the worktree lacks what was merged after it began.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from orchestrator.git.run_git import run_git
from orchestrator.git.worktrees import Worktrees
from orchestrator.merge.queue import Recheck
from orchestrator.run.checks.guard.regression import failures
from orchestrator.run.checks.integrity import Integrity, elapsed_ms, regression_feedback
from orchestrator.run.checks.running.check_pool import CheckRunner, run_checks
from orchestrator.spec.feature_spec import Feature
from shared_base.check_result import CheckResult


def merged_changes(tree: Path) -> list[str]:
    """The files a squash merge staged in `tree` (the project's directory in the integration
    worktree), relative to it: what the feature brings onto the branch."""
    staged = run_git(tree, "diff", "--cached", "--name-only", "-z", "--relative")
    return [name for name in staged.stdout.split("\0") if name]


def guarded_recheck(
    integrity: Integrity, runner: CheckRunner, own_check: CheckResult | None, tree: Path, feature: Feature,
    attempt: int,
) -> CheckResult | None:
    """None when the merged tree passes the feature's check (`own_check`, None for a pass) and
    every check the guard picks, run by `runner` (standing in for the live repository:
    `check_pool.in_checkout`); else the failure to feed back."""
    if own_check is not None:
        return own_check
    # The integration worktree is reset before every merge, and the checkpoint is committed from
    # the index the merge staged: what a check changes in the files there is dropped anyway.
    started = time.monotonic()
    changed = merged_changes(tree)
    round = integrity.guard.check(tree, feature, changed, runner=runner, put_back=False,
                                  on_progress=integrity.progress(feature.id))
    integrity.rechecked(feature.id, round.runs, elapsed_ms(started), deferred=round.deferred)
    broken = failures(round.runs)
    return regression_feedback(integrity, broken, changed, attempt, deferred=round.deferred) if broken else None


def batch_recheck(
    integrity: Integrity, runner: CheckRunner, concurrency: int, tree: Path, members: Sequence[tuple[Feature, int]],
    changed: list[str],
) -> bool:
    """A merge batch's re-check (`merge_batch`): each member's own check and the guard's checks for
    what the batch changed (each member's plan within its budget), each distinct command once,
    several at once. True when all pass; then each member's regression checks are recorded as if
    it had been re-checked alone."""
    spec, guard, batched = integrity.spec, integrity.guard, {feature.id for feature, _ in members}
    started = time.monotonic()
    own = [(feature.id, spec.check_command(feature) or "") for feature, _ in members if spec.check_command(feature)]
    plans = {feature.id: guard.plan(feature, changed) for feature, _ in members}
    guarded = [fid for fid in dict.fromkeys(t for plan in plans.values() for t in plan.picked) if fid not in batched]
    checks = own + [(fid, spec.check_command(spec.feature(fid)) or "") for fid in guarded]
    # The batch's commits are made before its checks run, and the integration worktree is reset
    # before every merge: what a check changes there is dropped, so nothing is recorded to put back.
    runs = run_checks(checks, tree, runner, concurrency, integrity.events.warn, put_back=False,
                      on_progress=integrity.progress(*batched))
    guard.ran(run for run in runs if run.feature_id not in batched)
    if failures(runs):
        return False
    took = elapsed_ms(started)  # the batch's checks ran together: each member's guard took that long
    by_id = {run.feature_id: run for run in runs}
    for feature, _ in members:
        mine = [by_id[fid] for fid in plans[feature.id].picked if fid in by_id]
        integrity.rechecked(feature.id, mine, took, deferred=len(plans[feature.id].deferred))
    return True


def worker_integrity(run_integrity: Integrity) -> Integrity:
    """A worker's side of the integrity work: the run's assessment, failed work parked from a
    worktree that is all its own, and no re-checks there (its tree lacks what was merged since
    it began; `guarded_recheck` runs them on the merged tree)."""
    return Integrity(
        run_integrity.spec, run_integrity.guard, run_integrity.events, park_failures=True, start=None,
        recheck_in_workspace=False, footprints_by_git=True, trees=run_integrity.trees,
    )


LikelyConflict = Callable[[Feature, Feature], bool]
ParkFailed = Callable[[Feature, Worktrees], None]


def _never(_a: Feature, _b: Feature) -> bool:
    return False


def _delete_work(feature: Feature, worktrees: Worktrees) -> None:
    worktrees.remove(feature.id)


@dataclass
class ParallelHooks:
    """The pluggable steps of a parallel run (see the module's docstring)."""

    recheck: Recheck | None = None  # None: the feature's own check on the merged tree
    likely_conflict: LikelyConflict = _never
    park_failed: ParkFailed = _delete_work
