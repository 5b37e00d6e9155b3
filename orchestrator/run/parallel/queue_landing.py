"""Where a `--jobs N` feature's pass lands: a `FeatureJob` in its own worktree is given a
`QueueLanding`, so its pass goes through the merge queue before it counts.

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

from orchestrator.git import checkpoint as git_checkpoint
from orchestrator.git.worktrees import Worktrees
from orchestrator.llm.attempt_model import attempt_model
from orchestrator.merge.conflict_step import ConflictStep, model_ask
from orchestrator.merge.queue import MergeQueue
from orchestrator.run.attempt.feature_job import FeatureJob
from orchestrator.run.checks.impact_agent.impact import conflict_text, record_conflict
from orchestrator.run.parallel.worker_slots import WorkerSlots
from orchestrator.store.event_kinds import Merge
from orchestrator.store.events import EventSink
from orchestrator.store.run_state import PassToFinish, RunState, now_ms
from shared_base.check_result import CheckResult


@dataclass
class Lane:
    """What a worker's job needs to land its work: the worktrees, the queue, the event sink, the slots."""

    worktrees: Worktrees
    queue: MergeQueue
    events: EventSink
    slots: WorkerSlots


class QueueLanding:
    """A `FeatureJob`'s landing under `--jobs N`: its pass is merged onto the user's branch through
    the queue before it counts (`feature_job.PassLanding`)."""

    def __init__(self, lane: Lane) -> None:
        self.lane = lane

    def land(self, job: FeatureJob, attempt: int) -> CheckResult | None:
        lane, feature = self.lane, job.feature
        lane.slots.merging(feature.id)  # committing and merging are git's work: the next feature starts meanwhile
        job.recorder.phase("merging")
        lane.worktrees.commit_work(feature.id)
        outcome = lane.queue.land(feature, attempt, job.command, before_commit=lambda base: _merging(job, base),
                                  resolve=lambda files, base: self._resolve(job, attempt, files, base))
        message = outcome.failure.error if outcome.failure else outcome.note
        lane.events.emit(Merge(
            id=feature.id, result=outcome.result, attempt=attempt, sha=outcome.sha, files=outcome.files,
            message=message,
        ))
        if outcome.failure is None and job.watch is not None:
            job.watch.landed(outcome.changed)  # the footprint: what the checkpoint changed
        if outcome.failure is not None:
            job.recorder.entry.finishing = None
            if attempt < job.settings.max_attempts:  # a next attempt: model work again
                lane.slots.back_to_work(feature.id, lane.queue.should_stop)
            lane.worktrees.create(feature.id)  # the next attempt: from the branch as it is now
        return outcome.failure

    def settled(self, job: FeatureJob) -> None:
        if job.recorder.entry.status == "passed":
            self.lane.slots.passed(job.feature.id)

    def _resolve(self, job: FeatureJob, attempt: int, files: list[str], base: str) -> str | None:
        """The focused conflict step (`conflict_step`) in the feature's worktree, during its turn in the
        queue: a note on how it went, or None (then a whole new attempt, with a warning saying so)."""
        trees, feature = self.lane.worktrees, job.feature
        miss = record_conflict(job.recorder.books.state, feature.id, files)  # the prediction that missed
        self.lane.events.warn(conflict_text(feature.id, miss), id=feature.id)
        model = attempt_model(job.settings.config, attempt, job.settings.max_attempts).model
        ask = model_ask(job.client, model, f"{feature.id}: {feature.name}\n{feature.description}", job.command)
        step = ConflictStep(trees.path(feature.id), trees.workspace(feature.id), [*trees.safe, *trees.identity], ask)
        listed = ", ".join(files)
        if step.run(base):
            return f"merge conflict in {listed} resolved {'by the model' if step.model_called else 'by git'} after a rebase"
        self.lane.events.warn(f"{feature.id}: the merge conflict in {listed} was not resolved by a focused step; "
                              "a new attempt starts from the branch as it is now", id=feature.id)
        return None


def _merging(job: FeatureJob, base: str) -> None:
    """Recorded before the checkpoint is made: a resumed run finds it on the branch (or not)."""
    entry = job.recorder.entry
    entry.finishing = PassToFinish(checkpoint_message=f"orchestrate: {job.feature.id}: {job.feature.name}",
                                   checkpoint_base=base)
    job.recorder.record()


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
