"""One feature of a `--jobs N` run: a `FeatureJob` in its own worktree whose pass goes through
the merge queue before it counts.

A check that passes in the worktree is not yet a pass: the work is committed on the feature's
work branch and merged through the queue (`merge_queue`). Merged: the pass is recorded as in a
one-at-a-time run, and its checkpoint is the queue's commit. A conflict or a failed re-check is
the attempt's verification instead, and the next attempt starts in a fresh worktree made from
the branch as it is now. The feature gives its worker slot up while it waits for the queue
and takes one again for such a next attempt (`worker_slots`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.llm.reservations import SpendPool
from orchestrator.run import checkpoint as git_checkpoint
from orchestrator.run.feature_job import AttemptStep, FeatureJob
from orchestrator.run.merge_queue import MergeOutcome, MergeQueue
from orchestrator.run.verify import CheckVerifier, VerificationResult
from orchestrator.run.worker_slots import WorkerSlots
from orchestrator.run.worktrees import Worktrees
from orchestrator.store.events import EventSink
from orchestrator.store.run_state import RunState
from orchestrator.store.state import PassToFinish, now_ms


@dataclass
class Lane:
    """What a worker's job needs to land its work: the worktrees, the queue, the event sink, the slots."""

    worktrees: Worktrees
    queue: MergeQueue
    events: EventSink
    slots: WorkerSlots


class StoppingVerifier(CheckVerifier):
    """A worker's verifier: no new check once the run is stopping."""

    pool: SpendPool | None = None

    def check(self, command: str | None, attempt: int) -> VerificationResult:
        if self.pool is not None:
            self.pool.raise_if_stopped()
        return super().check(command, attempt)


class WorkerJob(FeatureJob):
    """A feature job whose passes are merged onto the user's branch before they count."""

    def __init__(self, *args: Any, lane: Lane, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lane = lane

    def _settle(self, attempt: int, step: AttemptStep) -> None:
        if step.verification.success:
            outcome = self._land(attempt)
            if outcome.failure is not None:
                self.recorder.verified(outcome.failure)
                step = AttemptStep(step.record, outcome.failure, step.report, step.learned)
        super()._settle(attempt, step)
        if self.recorder.entry.status == "passed":
            self.lane.slots.passed(self.feature.id)

    def _land(self, attempt: int) -> MergeOutcome:
        lane, feature = self.lane, self.feature
        lane.slots.merging(feature.id)  # committing and merging are git's work: the next feature starts meanwhile
        self.recorder.phase("merging")
        lane.worktrees.commit_work(feature.id)
        outcome = lane.queue.land(feature, attempt, self.command, before_commit=self._merging)
        lane.events.emit(
            "merge", id=feature.id, result=outcome.result, attempt=attempt, sha=outcome.sha, files=outcome.files,
            message=outcome.failure.error if outcome.failure else None,
        )
        if outcome.failure is None and self.watch is not None:
            self.watch.landed(outcome.changed)  # the footprint: what the checkpoint changed
        if outcome.failure is not None:
            self.recorder.entry.finishing = None
            if attempt < self.settings.max_attempts:  # a next attempt: model work again
                lane.slots.back_to_work(feature.id, lane.queue.should_stop)
            lane.worktrees.create(feature.id)  # the next attempt: from the branch as it is now
        return outcome

    def _merging(self, base: str) -> None:
        """Recorded before the checkpoint is made: a resumed run finds it on the branch (or not)."""
        entry = self.recorder.entry
        entry.finishing = PassToFinish(checkpoint_message=f"orchestrate: {self.feature.id}: {self.feature.name}",
                                       checkpoint_base=base)
        self.recorder.record()


def take_up_merge(state: RunState, feature_id: str, workspace: Path) -> bool:
    """A feature a killed run left in the merge queue: passed if its checkpoint is on the branch,
    else redone. Whether its entry changed."""
    entry = state.feature(feature_id)
    finishing = entry.finishing
    if finishing is None:
        return False
    message = finishing.checkpoint_message
    sha = git_checkpoint.find_checkpoint(workspace, message, finishing.checkpoint_base) if message else None
    if sha is None:
        entry.finishing = None
    else:
        entry.status, entry.reason, entry.completed_at = "passed", None, now_ms()
        entry.attempts += 1
        state.iteration += 1
        entry.iteration = state.iteration
    return True
