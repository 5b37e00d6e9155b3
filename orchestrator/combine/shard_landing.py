"""One feature's checkpoint onto the combined branch, through the parallel workers' merge queue.

`CombineLanding` builds a `MergeQueue` (`orchestrator.merge.queue`) whose `Landing` is
`CherryPick` and whose re-check is the parallel run's: the feature's own check on the combined
tree, then the regression guard's affected set (`guarded_recheck`: the passed features whose
footprint meets the files the checkpoint changes, plus its dependencies; `--regression all`
re-runs every passed feature's check, `none` none). Each landing is one `merge` event, shaped as
a parallel run's, and the guard's re-runs are `regression_check` events.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from orchestrator.combine.final_check import CheckSettings, work_tree_top
from orchestrator.combine.integration import CherryPick, CombinedBranch
from orchestrator.git.worktrees import Worktrees
from orchestrator.merge.queue import MergeOutcome, MergeQueue
from orchestrator.run.checks.clean_checkout import private_directory, remove_tree
from orchestrator.run.checks.guard.regression import RegressionGuard, RegressionMode
from orchestrator.run.checks.integrity import Integrity
from orchestrator.run.checks.running.check_pool import CheckRun, in_checkout
from orchestrator.run.parallel.integrity_steps import guarded_recheck
from orchestrator.spec.feature_spec import Feature, FeatureSpec
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.event_kinds import Merge
from orchestrator.store.events import EventSink
from orchestrator.store.run_state import RunState
from shared_base.check_result import CheckResult

MergeResult = Literal["merged", "conflict", "recheck_failed"]


@dataclass
class ApplyResult:
    """What landing one feature's checkpoint did (the `merge` event's `result`)."""

    feature_id: str
    result: MergeResult
    sha: str | None = None  # the combined branch's new commit when merged
    message: str = ""
    broken: list[str] = field(default_factory=list)  # features whose check failed with it
    failure: CheckResult | None = None  # the failed check (or the conflict's hunks)


class _Watching(Integrity):
    """The run's `Integrity`, remembering which checks the guard's last re-check ran."""

    last_runs: list[CheckRun]

    def rechecked(self, feature_id: str, runs: list[CheckRun], duration_ms: int, *, deferred: int = 0) -> None:
        self.last_runs = runs
        super().rechecked(feature_id, runs, duration_ms, deferred=deferred)


class CombineLanding:
    """Lands features' checkpoints on `branch`, one at a time, re-checked (see the module)."""

    def __init__(self, paths: ProjectPaths, spec: FeatureSpec, state: RunState, branch: CombinedBranch,
                 events: EventSink, settings: CheckSettings, mode: RegressionMode) -> None:
        self.spec, self.events = spec, events
        # The integration worktree lives outside the project, as verification checkouts do: under
        # `.autonomous/`, a check run there without a sandbox reached the live tree by `../../`.
        # In the sandbox it is mounted over the live repository (`in_checkout`): no check sees the
        # live tree either way. `close` removes it; one a kill left, the next combine.
        Worktrees(paths.root, paths.autonomous).remove_integration()  # an earlier version's, in the project
        self._private = private_directory(paths.root, "combine")
        self.worktrees = Worktrees(paths.root, paths.autonomous, integration=self._private / "tree")
        self.runner = in_checkout(settings.runner(), self.worktrees.integration, work_tree_top(paths.root))
        guard = RegressionGuard(spec, state, mode=mode, concurrency=settings.jobs, runner=self.runner,
                                on_warning=events.warn)
        self.integrity = _Watching(spec, guard, events, park_failures=False, recheck_in_workspace=False)
        self.integrity.last_runs = []
        self.cherry_pick = CherryPick(branch)
        self.queue = MergeQueue(self.worktrees, self._recheck, lambda: False, self.cherry_pick)
        self._own_failed = False

    def __enter__(self) -> CombineLanding:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        """The integration worktree, git's record of it and its private directory, gone."""
        try:
            self.worktrees.remove_integration()
        finally:
            remove_tree(self._private)

    def land(self, feature: Feature, commit: str | None, attempt: int) -> ApplyResult:
        """Cherry-pick `commit` (None: nothing to pick) onto the branch, re-checked; emits `merge`."""
        self.cherry_pick.commits[feature.id] = commit
        self.integrity.last_runs, self._own_failed = [], False
        outcome = self.queue.land(feature, attempt, self.spec.check_command(feature), before_commit=lambda _base: None)
        result = self._result(feature.id, outcome)
        self.events.emit(Merge(
            id=feature.id, result=outcome.result, attempt=attempt, sha=outcome.sha, files=outcome.files,
            message=result.message or None,
        ))
        return result

    def tree_at_tip(self) -> Path:
        """The integration worktree, clean, at the combined branch's tip (for final verification,
        which carries the ignored files in itself: `verify_combined`)."""
        tree = self.worktrees.reset_integration(self.cherry_pick.branch.tip(), carry=False)
        return self.worktrees.project_dir(tree)

    def _recheck(self, tree: Path, feature: Feature, attempt: int) -> CheckResult | None:
        command = self.spec.check_command(feature)
        own = self.runner(command, tree) if command else None
        failed = own if own is not None and not own.success else None
        self._own_failed = failed is not None
        return guarded_recheck(self.integrity, self.runner, failed, tree, feature, attempt)

    def _result(self, fid: str, outcome: MergeOutcome) -> ApplyResult:
        if outcome.result == "merged":
            return ApplyResult(fid, "merged", sha=outcome.sha)
        if outcome.result == "conflict":
            message = (f"{fid}: its checkpoint does not apply onto the combined branch "
                       f"(conflicting files: {', '.join(outcome.files)})")
            return ApplyResult(fid, "conflict", message=message, failure=outcome.failure)
        broken = [fid] if self._own_failed else [run.feature_id for run in self.integrity.last_runs if not run.success]
        return ApplyResult(fid, "recheck_failed", message=broken_message(fid, broken), broken=broken,
                           failure=outcome.failure)


def broken_message(feature_id: str, broken: list[str]) -> str:
    """`<id>: its own check fails on the combined tree` / `<id>: it breaks the check of <ids>`."""
    own = feature_id in broken
    others = [fid for fid in broken if fid != feature_id]
    parts = (["its own check fails on the combined tree"] if own else []) + (
        [f"it breaks the check of {', '.join(others)}"] if others else []
    )
    return f"{feature_id}: " + ("; ".join(parts) or "its re-check failed on the combined tree")
