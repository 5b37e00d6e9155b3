"""What a feature job does so that a pass stays a pass: the assessment before it, the
regression guard after its check, and a failure's work moved out of the tree.

`Integrity` is one of the job's collaborators (optional: without it a job behaves as before);
the coordinator builds one per run. Everything it does to git goes through
`orchestrator.run.checks.failed_work` and `orchestrator.run.checks.running.check_pool`, which take a workspace.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.git import checkpoint as git_checkpoint
from orchestrator.git.run_git import CheckpointError
from orchestrator.run.checks.assessment import assess, prompt_line
from orchestrator.run.checks.failed_work import StartOfRun, park_failed_work
from orchestrator.run.checks.guard.footprint import ChangeWatch, TreeLedgers, footprint
from orchestrator.run.checks.guard.regression import RegressionGuard, broken_result, failures
from orchestrator.run.checks.impact_agent.impact import predict
from orchestrator.run.checks.impact_agent.impact_note import builder_index, forward_note
from orchestrator.run.checks.protection.hidden_files import hidden_by_new_rules, hidden_result
from orchestrator.run.checks.running.check_pool import CheckRun, Progress
from orchestrator.spec.feature_spec import Feature, FeatureSpec
from orchestrator.store.event_kinds import Notice, RegressionCheck, RegressionSummary
from orchestrator.store.events import EventSink
from orchestrator.store.records import Assessment, Footprint, ReCheck
from orchestrator.store.run_state import RESUMED_AFTER_INTERRUPT, FeatureState
from shared_base.check_result import CheckResult
from shared_base.tokens import estimate_tokens


@dataclass
class Integrity:
    """The run's regression guard and failed-work keeper, for its feature jobs."""

    spec: FeatureSpec
    guard: RegressionGuard
    events: EventSink
    park_failures: bool  # commits are on in a git project
    start: StartOfRun | None = None
    # The files a feature changed come from git only where each feature commits a checkpoint;
    # else from the run's ledger of each tree's files (`orchestrator.run.checks.guard.footprint`).
    footprints_by_git: bool = True
    trees: TreeLedgers = field(default_factory=TreeLedgers)
    # False for a parallel worker: its worktree predates what was merged meanwhile, so the
    # guard's checks run after its merge, on the merged tree (`orchestrator.run.parallel.integrity_steps`).
    recheck_in_workspace: bool = True
    _warned_no_git: bool = False

    @classmethod
    def for_run(cls, root: Path, spec: FeatureSpec, guard: RegressionGuard, events: EventSink, commit: bool) -> Integrity:
        """Record the tree as the run found it (for what must never be reset)."""
        git = git_checkpoint.is_git_repo(root)
        park = commit and git
        integrity = cls(spec, guard, events, park, footprints_by_git=park)
        if commit and not git:  # said once, before any feature: not first when one fails
            events.warn(f"{root} is not a git repository: no checkpoint commits, and a failed feature's work stays "
                        "in the tree; run `git init` there to get them (--no-commit: none wanted, no warning)")
        if park:
            try:
                integrity.start = StartOfRun.take(root)
            except CheckpointError as err:
                events.warn(f"could not record the tree at the start of the run ({err}); failed work will not be reset")
            else:
                if integrity.start.dirty:
                    integrity._say_dirty(len(integrity.start.dirty))
        return integrity

    def _say_dirty(self, count: int) -> None:
        """Uncommitted files at the start: a warning, unless an interrupted attempt is resumed on them
        (they are most likely its work, which it starts again on: a note, shown with -v)."""
        resumed = [fid for fid, entry in self.guard.state.features.items() if entry.reason == RESUMED_AFTER_INTERRUPT]
        said = f"the tree has uncommitted changes ({count} file(s)); a failed feature's work will not reset those files"
        if not resumed:
            self.events.warn(said)
            return
        self.events.emit(Notice(type="note", message=f"{said}; most likely what the interrupted attempt of "
                                                     f"{', '.join(resumed)} left, which it starts again on"))

    def assessment(self, feature: Feature) -> tuple[Assessment, str, int]:
        """The feature's assessment, its lines for the prompt (the checks that will be re-run, and
        the later features that build on the files it will change: `impact_note`) and the
        forward-looking line's tokens, which the project context gives up (it counts against the
        context budget). Its footprint is predicted again first: its dependencies' footprints are
        known by now."""
        state = self.guard.state
        prediction = state.feature(feature.id).prediction = predict(feature, self.spec, state, self.guard)
        builder_index(self.spec, state).add(feature.id, prediction)
        found = assess(feature, self.spec, state, self.guard)
        forward = forward_note(feature, self.spec, state)
        lines = (prompt_line(found, self.spec), forward)
        return found, "\n".join(line for line in lines if line), estimate_tokens(forward) if forward else 0

    def rechecked(self, feature_id: str, runs: list[CheckRun], duration_ms: int, *, deferred: int = 0) -> None:
        """Emit the guard's run after `feature_id`: a `regression_check` for each check it ran (the
        details), then one `regression_summary` (what the console shows of it)."""
        if self.guard.mode == "none":
            return
        for run in runs:
            kept = run.result if not run.success else run.result.model_copy(update={"output": ""})  # a failure's only
            self.events.emit(RegressionCheck(id=feature_id, checked=run.feature_id, check=kept, duration_ms=run.duration_ms))
        self.events.emit(RegressionSummary(
            id=feature_id, affected=len(runs) + deferred, ran=len(runs),
            failed=[run.feature_id for run in failures(runs)], deferred=deferred, duration_ms=duration_ms,
        ))

    def progress(self, *feature_ids: str) -> Progress:
        """The live view's `regression k/n` for the features whose guard's checks these are."""

        def show(done: int, total: int) -> None:
            for feature_id in feature_ids:
                self.events.phase("regression", feature_id, done, total)

        return show

    def park(self, workspace: Path, feature: Feature, entry: FeatureState) -> None:
        """Move a failed feature's work to its branch, and say where it went."""
        if not self.park_failures:
            if not self._warned_no_git:
                self._warned_no_git = True
                self.events.warn(f"{feature.id} failed; its work stays in the tree (no git checkpoints to return to)",
                                 id=feature.id)
            return
        try:
            parked = park_failed_work(workspace, feature.id, f"orchestrate: failed: {feature.id}: {feature.name}",
                                      self.start)
        except CheckpointError as err:
            self.events.warn(f"{feature.id} failed; its work could not be moved to a branch ({err}); it stays in the tree",
                             id=feature.id)
            return
        entry.failed_branch = parked.branch
        where = f"its work is on branch {parked.branch}" if parked.branch else "no work to keep"
        notes = "; ".join(parked.notes)
        self.events.warn(f"{feature.id} failed; {where}" + (f" ({notes})" if notes else ""), id=feature.id)

    def watch(self, workspace: Path, feature: Feature) -> FeatureWatch:
        return FeatureWatch(self, workspace, feature)


def elapsed_ms(started: float) -> int:
    """Milliseconds since `started` (a `time.monotonic()` reading)."""
    return int((time.monotonic() - started) * 1000)


class FeatureWatch:
    """One feature job's side of `Integrity`: its assessment, its changes, its re-run checks."""

    def __init__(self, integrity: Integrity, workspace: Path, feature: Feature) -> None:
        self.integrity, self.workspace, self.feature = integrity, workspace, feature
        self.assessment, self.note, self.note_tokens = integrity.assessment(feature)
        self.changes = ChangeWatch(workspace, by_git=integrity.footprints_by_git, trees=integrity.trees)
        self.changed: list[str] | None = None
        self.runs: list[CheckRun] = []

    def after_check(self, attempt: int, result: CheckResult, own_seconds: float) -> CheckResult:
        """The attempt's result once the regression guard had its say: the broken feature's check if one broke.
        `own_seconds`: what the feature's own check took (the guard's budget is a multiple of it)."""
        self.runs, self.changed = [], None
        if not result.success:
            return result
        self.integrity.guard.own_check_took(self.feature.id, own_seconds)
        if not self.integrity.recheck_in_workspace:
            return result
        self.changed = self.changes.changed()
        started = time.monotonic()
        round = self.integrity.guard.check(self.workspace, self.feature, self.changed, runner=self.integrity.guard.runner,
                                           on_progress=self.integrity.progress(self.feature.id))
        self.runs = round.runs
        self.integrity.rechecked(self.feature.id, self.runs, elapsed_ms(started), deferred=round.deferred)
        broken = failures(self.runs)
        if not broken:
            return result
        return regression_feedback(self.integrity, broken, self.changed, attempt, deferred=round.deferred)

    def hidden(self, command: str | None, attempt: int) -> CheckResult | None:
        """Before the check runs (its own outputs are not the work): the attempt's failure when
        new ignore rules hide files from git that a checkpoint would then lack (`hidden_files`)."""
        if not self.integrity.park_failures:  # no checkpoints: nothing is left out of one
            return None
        found = hidden_by_new_rules(self.workspace, self._before())
        return hidden_result(command, attempt, found) if found else None

    def _before(self) -> list[str]:
        """What the ignore rules are judged against: the last checkpoint, and the tree the run found."""
        start = self.integrity.start
        return ["HEAD", start.tree] if start else ["HEAD"]

    def landed(self, changed: list[str]) -> None:
        """The files the feature's checkpoint changed, when it was made elsewhere (a parallel
        run's merge): its footprint, as a serial run finds it in the tree before its checkpoint."""
        self.changed = changed

    def records(self) -> list[ReCheck]:
        return [run.record() for run in self.runs]

    def footprint(self, entry: FeatureState) -> Footprint:
        changed = self.changed if self.changed is not None else self.changes.changed()
        return footprint(changed, entry.check_files.files if entry.check_files else [], entry.footprint)

    def failed(self, entry: FeatureState) -> None:
        self.integrity.park(self.workspace, self.feature, entry)


def regression_feedback(
    integrity: Integrity, broken: list[CheckRun], changed: Sequence[str], attempt: int, *, deferred: int,
) -> CheckResult:
    """The attempt's failure when its `changed` files broke passed features: the first broken
    feature's check, the changed files its footprint holds, and how many announced checks the
    guard's budget deferred (one-at-a-time runs and `--jobs` merge re-checks alike)."""
    entry = integrity.guard.state.features.get(broken[0].feature_id)
    shared = sorted(set(changed) & entry.footprint.files()) if entry and entry.footprint else []
    return broken_result(broken, attempt, shared=shared, deferred=deferred)
