"""One feature of a `--jobs N` run: a `FeatureJob` in its own worktree whose pass goes through
the merge queue before it counts.

A check that passes in the worktree is not yet a pass: the work is committed on the feature's
work branch and merged through the queue (`merge_queue`). Merged: the pass is recorded as in a
one-at-a-time run, and its checkpoint is the queue's commit. A conflict or a failed re-check is
the attempt's verification instead, and the next attempt starts in a fresh worktree made from
the branch as it is now.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from orchestrator.run.feature_job import AttemptStep, FeatureJob
from orchestrator.run.merge_queue import MergeOutcome, MergeQueue
from orchestrator.run.worktrees import Worktrees
from orchestrator.store.events import EventSink
from orchestrator.store.state import PassToFinish


@dataclass
class Lane:
    """What a worker's job needs to land its work: the worktrees, the queue, the event sink."""

    worktrees: Worktrees
    queue: MergeQueue
    events: EventSink


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

    def _land(self, attempt: int) -> MergeOutcome:
        lane, feature = self.lane, self.feature
        lane.worktrees.commit_work(feature.id)
        outcome = lane.queue.land(feature, attempt, self.command, before_commit=self._merging)
        lane.events.emit(
            "merge", id=feature.id, result=outcome.result, attempt=attempt, sha=outcome.sha, files=outcome.files,
            message=outcome.failure.error if outcome.failure else None,
        )
        if outcome.failure is not None:
            self.recorder.entry.finishing = None
            lane.worktrees.create(feature.id)  # the next attempt: from the branch as it is now
        return outcome

    def _merging(self, base: str) -> None:
        """Recorded before the checkpoint is made: a resumed run finds it on the branch (or not)."""
        entry = self.recorder.entry
        entry.finishing = PassToFinish(checkpoint_message=f"orchestrate: {self.feature.id}: {self.feature.name}",
                                       checkpoint_base=base)
        self.recorder.record()
