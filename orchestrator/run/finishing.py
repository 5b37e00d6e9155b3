"""What follows a recorded pass: the Context Agent's records, the checkpoint commit and the
summarization count. Safe to do again after a kill: a made commit is found, not made twice,
so a run that finds a pass recorded but not finished finishes it without the model.

A checkpoint that cannot be made does not stop the run, but the feature is not counted passed:
it ends `failed`, saying why, and its work stays in the tree.
"""

from __future__ import annotations

from pathlib import Path

from orchestrator.git import checkpoint as git_checkpoint
from orchestrator.git.run_git import CheckpointError
from orchestrator.json_types import AgentReport
from orchestrator.run.attempt.context_view import ContextView
from orchestrator.run.base.books import RunBooks
from orchestrator.run.base.feature_logs import FeatureLogs
from orchestrator.store.event_kinds import Checkpoint
from orchestrator.store.events import EventSink
from orchestrator.store.run_state import PassToFinish

RECENT_KEPT = 50  # completed feature ids kept for the window strategy


class PassFinisher:
    """Finishes passes in one project: records, checkpoint, count."""

    def __init__(self, books: RunBooks, context: ContextView, root: Path, commit: bool, events: EventSink) -> None:
        self.books, self.context, self.root, self.commit, self.events = books, context, root, commit, events

    def finish(self, feature_id: str, report: AgentReport | None, learned: str | None) -> None:
        """Finish the pass of `feature_id`, recorded with what is left to do."""
        state = self.books.state
        entry = state.feature(feature_id)
        finishing = entry.finishing or PassToFinish()
        if report:
            self.context.record_report(feature_id, report)
        if learned is not None:  # it passed after failing: its failures are resolved, with what prevents them
            self.context.record_prevention(feature_id, learned)
        state.recent_completed = [*(x for x in state.recent_completed if x != feature_id), feature_id][-RECENT_KEPT:]
        if finishing.checkpoint_message and self.commit:
            self._checkpoint(feature_id, finishing)
        entry.finishing = None
        self.books.count_completed(feature_id)
        self.books.record(feature_id, fsync=False)  # lost to a power cut, the finishing is done again

    def finish_interrupted(self, logs: FeatureLogs) -> None:
        """Finish the passes a killed run recorded but did not finish, without the model."""
        for feature_id, entry in list(self.books.state.features.items()):
            if entry.finishing is None:
                continue
            report = logs.previous(feature_id)[1]
            prevention = report.get("prevention") if report else None
            learned = None
            if entry.attempts > 1:
                learned = prevention if isinstance(prevention, str) else ""
            self.finish(feature_id, report, learned)

    def _checkpoint(self, feature_id: str, finishing: PassToFinish) -> None:
        message = finishing.checkpoint_message or ""
        try:
            # Made by a run killed before it could record it? Then it is not made twice.
            sha = git_checkpoint.find_checkpoint(self.root, message, finishing.checkpoint_base)
            if sha is None:
                sha = git_checkpoint.commit_checkpoint(self.root, message, on_warning=self.events.warn)
        except CheckpointError as err:
            # A pass without its commit is no pass: the branch would lack what the check verified.
            entry = self.books.state.feature(feature_id)
            entry.status = "failed"
            entry.reason = f"its check passed, but its checkpoint commit failed: {err}; its work stays in the tree"
            self.events.warn(f"checkpoint commit for {feature_id} failed: {err}; {feature_id} is not counted passed",
                             id=feature_id)
        else:
            if sha:
                self.events.emit(Checkpoint(id=feature_id, sha=sha))
