"""The integrity work (`orchestrator.run.integrity`) plugged into a parallel run's steps.

- The re-check after a merge: the feature's own check on the merged tree, then the regression
  guard over the files the merge changed, so a feature that breaks one merged meanwhile is
  caught there, where the two meet, and fed back.
- The same for a batch of features merged together: their own checks and the guard's, run once.
- Which ready features are likely to touch the same files: their predicted footprints (the
  Checkpoint Agent's assessment) overlap.
- A worker's `Integrity`: the run's assessment and failed work parked on `orchestrate/failed/<id>`
  from the worker's worktree (which holds nothing of the user's: no start-of-run tree to spare);
  its re-checks wait for the merge, since the worktree lacks what was merged after it began.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from orchestrator.run.assessment import assess
from orchestrator.run.check_pool import CheckRunner, run_checks
from orchestrator.run.git_safety import run_git
from orchestrator.run.integrity import Integrity, elapsed_ms
from orchestrator.run.regression import broken_result, failures
from orchestrator.run.verify import VerificationResult
from orchestrator.spec.load import Feature


def merged_changes(tree: Path) -> list[str]:
    """The files a squash merge staged in `tree` (the project's directory in the integration
    worktree), relative to it: what the feature brings onto the branch."""
    staged = run_git(tree, "diff", "--cached", "--name-only", "-z", "--relative")
    return [name for name in staged.stdout.split("\0") if name]


def guarded_recheck(
    integrity: Integrity, own_check: VerificationResult | None, tree: Path, feature: Feature, attempt: int
) -> VerificationResult | None:
    """None when the merged tree passes the feature's check (`own_check`, None for a pass) and
    every check the guard picks; else the failure to feed back."""
    if own_check is not None:
        return own_check
    # The integration worktree is reset before every merge, and the checkpoint is committed from
    # the index the merge staged: what a check changes in the files there is dropped anyway.
    started = time.monotonic()
    runs = integrity.guard.check(tree, feature, merged_changes(tree), put_back=False,
                                 on_progress=integrity.progress(feature.id))
    integrity.rechecked(feature.id, runs, elapsed_ms(started))
    broken = failures(runs)
    return broken_result(broken, attempt) if broken else None


def batch_recheck(
    integrity: Integrity, runner: CheckRunner, concurrency: int, tree: Path, members: Sequence[tuple[Feature, int]],
    changed: list[str],
) -> bool:
    """A merge batch's re-check (`merge_batch`): each member's own check and the guard's checks for
    what the batch changed, each distinct command once, several at once. True when all pass; then
    each member's regression checks are recorded as if it had been re-checked alone."""
    spec, batched = integrity.spec, {feature.id for feature, _ in members}
    own = [(feature.id, spec.check_command(feature) or "") for feature, _ in members if spec.check_command(feature)]
    targets = {feature.id: integrity.guard.targets(feature, changed) for feature, _ in members}
    guarded = [fid for fid in dict.fromkeys(t for picked in targets.values() for t in picked) if fid not in batched]
    checks = own + [(fid, spec.check_command(spec.feature(fid)) or "") for fid in guarded]
    # The batch's commits are made before its checks run, and the integration worktree is reset
    # before every merge: what a check changes there is dropped, so nothing is recorded to put back.
    started = time.monotonic()
    runs = run_checks(checks, tree, runner, concurrency, integrity.events.warn, put_back=False,
                      on_progress=integrity.progress(*batched))
    if failures(runs):
        return False
    took = elapsed_ms(started)  # the batch's checks ran together: each member's guard took that long
    by_id = {run.feature_id: run for run in runs}
    for feature, _ in members:
        integrity.rechecked(feature.id, [by_id[fid] for fid in targets[feature.id] if fid in by_id], took)
    return True


def footprints_overlap(integrity: Integrity, a: Feature, b: Feature) -> bool:
    """True when the two features' predicted footprints share a file."""
    state = integrity.guard.state
    first = set(assess(a, integrity.spec, state, integrity.guard).predicted_footprint)
    if not first:
        return False
    return bool(first & set(assess(b, integrity.spec, state, integrity.guard).predicted_footprint))


def worker_integrity(run_integrity: Integrity) -> Integrity:
    """A worker's side of the integrity work: the run's assessment, failed work parked from a
    worktree that is all its own, and no re-checks there (its tree lacks what was merged since
    it began; `guarded_recheck` runs them on the merged tree)."""
    return Integrity(
        run_integrity.spec, run_integrity.guard, run_integrity.events, park_failures=True, start=None,
        recheck_in_workspace=False,
    )
