"""What one feature's run writes down, gathered out of the attempt loop's way.

A `FeatureRecorder` is the feature job's one pen: the state journal (through `RunBooks`), the
feature log, the event stream and the working-memory log. Its methods are named for what
happened (`attempt_started`, `verified`, `finished`), so the loop reads as the steps it takes.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

from orchestrator.json_types import AgentReport
from orchestrator.run.attempt.agent_loop import AgentEvent, AttemptOutcome
from orchestrator.run.base.books import RunBooks
from orchestrator.run.base.feature_logs import FeatureLogs
from orchestrator.spec.feature_spec import Feature
from orchestrator.store.event_kinds import FeatureBlocked, FeatureFinished, FeatureStarted, ToolCall, Verification
from orchestrator.store.events import EventSink
from orchestrator.store.feature_log import ReplayStats, build_feature_log
from orchestrator.store.memory_entries import CheckEvent, StatusEvent, TextInput, TextOutput, ToolEvent
from orchestrator.store.records import Assessment, AttemptRecord
from orchestrator.store.run_state import FeatureState
from orchestrator.store.working_memory import WorkingMemory
from shared_base.check_result import CheckResult


@dataclass(frozen=True)
class LogHeading:
    """What every feature log of the run names besides the feature."""

    model: str
    strategy: str
    check_command: str | None


@dataclass
class FeatureLogDraft:
    """The feature log as it grows: its attempts, the agent's last report, replay's stats."""

    attempts: list[AttemptRecord] = field(default_factory=list)
    report: AgentReport | None = None
    replay_stats: dict[str, int] | None = None
    assessment: Assessment | None = None


class FeatureRecorder:
    """Journal, log, events and working memory for one feature."""

    def __init__(
        self, feature: Feature, books: RunBooks, logs: FeatureLogs, events: EventSink, memory: WorkingMemory,
        heading: LogHeading,
    ) -> None:
        self.feature, self.books, self.logs, self.events, self.memory = feature, books, logs, events, memory
        self.heading = heading
        self.draft = FeatureLogDraft()
        self.clock, self.base_duration = time.monotonic(), 0

    @property
    def entry(self) -> FeatureState:
        return self.books.state.feature(self.feature.id)

    def begin(self) -> None:
        """Start the feature's clock and spend, and take up the attempts earlier runs logged."""
        self.books.start_feature(self.feature.id)
        self.clock, self.base_duration = time.monotonic(), self.entry.duration_ms
        attempts, report = self.logs.previous(self.feature.id)
        self.draft.attempts = attempts
        if self.entry.attempts and self.entry.last_verification is not None:
            # A resumed retry is told what the attempt before it reported (`agent_view.retry_note`).
            self.draft.report = report

    def attempt_started(
        self, attempt: int, max_attempts: int, index: int, total: int, *, model: str | None = None,
        escalated: bool = False,
    ) -> None:
        self.record()
        self.events.emit(FeatureStarted(
            id=self.feature.id, name=self.feature.name, attempt=attempt, max_attempts=max_attempts,
            index=index, total=total, model=model, escalated=escalated,
        ))

    def in_progress(self, attempt: int) -> None:
        self.memory.append(StatusEvent(feature_id=self.feature.id, status="in_progress", attempt=attempt))

    def prompt_sent(self, attempt: int, prompt: str) -> None:
        self.memory.append(TextInput(feature_id=self.feature.id, attempt=attempt, text=prompt))

    def agent_done(self, attempt: int, outcome: AttemptOutcome) -> None:
        self.memory.append(TextOutput(
            feature_id=self.feature.id, attempt=attempt, stop=outcome.stop,
            text=outcome.final_text, report=outcome.report.model_dump() if outcome.report else None,
        ))

    def agent_event(self, event: AgentEvent) -> None:
        """Events from the agent loop: to the event sink, tool calls to working memory too."""
        self.events.emit(event)
        if isinstance(event, ToolCall):
            self.memory.append(ToolEvent(feature_id=event.feature, tool=event.tool, summary=event.summary,
                                         is_error=event.is_error))

    def phase(self, name: str) -> None:
        """What the feature is doing now, for the live view (`EventSink.phase`)."""
        self.events.phase(name, self.feature.id)

    def verified(self, verification: CheckResult) -> None:
        self.events.emit(Verification.of(self.feature.id, verification))
        self.memory.append(CheckEvent(feature_id=self.feature.id, check=verification))

    def book(self) -> None:
        self.books.book_feature(self.entry, self.clock, self.base_duration)

    def record(self, *, fsync: bool = True) -> None:
        self.books.record(self.feature.id, fsync=fsync)

    def write_log(self) -> None:
        log = build_feature_log(
            self.feature, self.entry, model=self.heading.model, strategy=self.heading.strategy,
            check_command=self.heading.check_command,
            attempts_log=list(self.draft.attempts),
            report=self.draft.report,
            replay_stats=ReplayStats.model_validate(self.draft.replay_stats) if self.draft.replay_stats else None,
            assessment=self.draft.assessment,
        )
        self.logs.write(log)

    def stopped(self) -> None:
        """Stopped by a limit, an unreachable API or an interrupt: keep what was spent and done."""
        self.book()
        self.write_log()
        self.record()

    def finished(self) -> None:
        entry = self.entry
        if entry.status == "failed":  # a pass whose checkpoint failed: its log said passed
            self.write_log()
        self._emit_finished()
        self.memory.append(StatusEvent(feature_id=self.feature.id, status=entry.status, attempts=entry.attempts))

    def settled(self) -> None:
        """Settled without running: blocked by a dependency, or out of attempts after a kill."""
        entry = self.entry
        self.record()
        self.draft.attempts, self.draft.report = self.logs.previous(self.feature.id)
        self.write_log()
        if entry.status == "blocked":
            self.events.emit(FeatureBlocked(id=self.feature.id, reason=entry.reason))
        else:
            self._emit_finished()
        self.memory.append(StatusEvent(feature_id=self.feature.id, status=entry.status, reason=entry.reason))

    def _emit_finished(self) -> None:
        self.events.emit(FeatureFinished(
            id=self.feature.id, state=self.entry,
            cpu_ms=round(time.process_time() * 1000), children_cpu_ms=_children_cpu_ms(),
        ))


def _children_cpu_ms() -> int:
    """User + sys CPU of the run's subprocesses that have ended (checks, git), in milliseconds."""
    used = os.times()
    return round((used.children_user + used.children_system) * 1000)
