"""One feature, run to its end: attempts, each verified by its check, and every step recorded.

A `FeatureJob` is given all it works with (workspace, model client, context view, verifier,
recorder, agent, and where a pass lands: its `PassLanding`); the runner owns the order of features,
summaries and the verdict, a job its feature.

Where a passing attempt's work lands is the job's `PassLanding`: in place (`IN_PLACE`, one feature at
a time, `--branch` too), the work is on the branch already and `finish_pass` makes its checkpoint;
under `--jobs N` it is merged through the merge queue first (`run/parallel/queue_landing`), and a
conflict or a failed re-check there becomes the attempt's verification instead of the pass.
Each attempt's check, with its files guarded, is `GuardedCheck`'s (`guarded_check`).

Every step is journaled before the next begins, so a kill at any instant resumes where it was:
the agent's finished work is recorded before its check runs (a resumed run runs only the check),
and a pass before its checkpoint (a resumed run makes or finds the commit, without the model).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from orchestrator.config import RunConfig
from orchestrator.git import checkpoint as git_checkpoint
from orchestrator.git.repository_guard import remove_foreign_git
from orchestrator.json_types import AgentReport
from orchestrator.llm.attempt_model import attempt_model
from orchestrator.llm.client import ModelClient
from orchestrator.run.attempt.agent_loop import AgentSession, AttemptOutcome
from orchestrator.run.attempt.agent_seam import BUILTIN_AGENT, Agent
from orchestrator.run.attempt.agent_view import AttemptView, retry_note, unreported, workspace_section
from orchestrator.run.attempt.context_view import ContextView, known_files
from orchestrator.run.attempt.feature_prompt import FeatureTurn
from orchestrator.run.attempt.guarded_check import GuardedCheck
from orchestrator.run.attempt.recorder import FeatureRecorder
from orchestrator.run.base.feature_logs import with_attempt
from orchestrator.run.checks.impact_agent.impact import score as score_prediction
from orchestrator.run.checks.integrity import Integrity
from orchestrator.run.checks.running.check_command import Verifier
from orchestrator.safety.environment import CommandEnvironment
from orchestrator.spec.feature_spec import Feature, FeatureSpec
from orchestrator.store.records import AttemptRecord
from orchestrator.store.run_state import AwaitingCheck, FeatureStatus, PassToFinish, now_ms
from orchestrator.tools.context import ToolContext
from orchestrator.tools.report import DefectiveCheck
from orchestrator.tools.shell_policy import configured_policy
from shared_base.check_result import CheckResult

RESUMED = "resumed after an interrupted attempt"
FinishPass = Callable[[str, AgentReport | None, str | None], None]
# failed after its check passed: its checkpoint could not be made (`finishing`); needs_review: its check is disputed
_ENDED = ("passed", "failed", "needs_review")


@dataclass(frozen=True)
class JobSettings:
    """What a job reads and never changes: the run's settings, the spec, the shared system prompt."""

    config: RunConfig
    spec: FeatureSpec
    system: str
    environment: CommandEnvironment  # where the agent's shell runs: the job's workspace, sandbox, no secrets
    max_attempts: int
    index: int  # the feature's position among the selected ones, for progress
    total: int
    agent: Agent = BUILTIN_AGENT  # who makes the attempts (`--agent`)


@dataclass
class AttemptStep:
    """One attempt as it ended: its `attemptHistory` record, its check, what the agent said."""

    record: AttemptRecord
    verification: CheckResult
    report: AgentReport | None
    learned: str | None


class PassLanding(Protocol):
    def land(self, job: FeatureJob, attempt: int) -> CheckResult | None:
        """Bring `job`'s passing attempt onto the branch; the failure that replaces the pass, or None."""
        ...

    def settled(self, job: FeatureJob) -> None:
        """`job`'s attempt is booked: passed, failed, or another attempt to come."""
        ...


class InPlace:
    """The work is where it counts: nothing to bring over, and the pass stands."""

    def land(self, job: FeatureJob, attempt: int) -> CheckResult | None:
        return None

    def settled(self, job: FeatureJob) -> None:
        return None


IN_PLACE = InPlace()


class FeatureJob:
    """Runs one feature until its check passes or its attempts are used up."""

    def __init__(
        self, feature: Feature, *, workspace: Path, client: ModelClient, context: ContextView, verifier: Verifier,
        recorder: FeatureRecorder, settings: JobSettings, finish_pass: FinishPass, integrity: Integrity | None = None,
        landing: PassLanding = IN_PLACE,
    ) -> None:
        self.feature, self.workspace, self.client = feature, workspace, client
        self.context, self.verifier, self.recorder, self.settings = context, verifier, recorder, settings
        self.finish_pass, self.landing = finish_pass, landing
        self.command = settings.spec.check_command(feature)
        self.hopeless: str | None = None  # why another attempt would end as this one did (`AttemptOutcome.final`)
        # The assessment before, the regression guard after each check, failed work off the tree.
        self.watch = integrity.watch(workspace, feature) if integrity else None
        recorder.draft.assessment = self.watch.assessment if self.watch else None
        self.check = GuardedCheck(
            feature, workspace=workspace, command=self.command, verifier=verifier, recorder=recorder,
            watch=self.watch, strict=settings.config.strict_checks,
        )

    def run(self) -> None:
        entry, recorder = self.recorder.entry, self.recorder
        recorder.begin()
        interrupted = entry.attempts + 1 if entry.reason == RESUMED and entry.awaiting_check is None else None
        if interrupted is not None:  # the attempt a kill cut short is run again; the log keeps that
            recorder.draft.attempts.append(AttemptRecord(attempt=interrupted, stop="interrupted"))
        try:
            while entry.attempts < self.settings.max_attempts and entry.status not in _ENDED and not self.hopeless:
                attempt = entry.attempts + 1
                awaiting = entry.awaiting_check
                if awaiting is not None and awaiting.attempt == attempt:
                    step = self._check_only(attempt, awaiting)
                else:
                    step = self._attempt(attempt, interrupted)
                    interrupted = None
                self._settle(attempt, step)
            if entry.status not in _ENDED:
                self._fail()
        except BaseException:
            recorder.stopped()
            raise
        recorder.finished()

    # ---- one attempt --------------------------------------------------------------------
    def _check_only(self, attempt: int, awaiting: AwaitingCheck) -> AttemptStep:  # the agent's part ran: the check is left
        self._start_attempt(attempt)
        self.recorder.in_progress(attempt)
        record = awaiting.record.model_copy() if awaiting.record else AttemptRecord(attempt=attempt)
        report = self.recorder.draft.report = awaiting.report or self.recorder.draft.report
        verification = self.check.run(attempt, reported=awaiting.report is not None, stop=str(record.stop))
        learned = (awaiting.report or {}).get("prevention")
        return AttemptStep(record, verification, report, learned)

    def _attempt(self, attempt: int, interrupted: int | None) -> AttemptStep:
        entry = self.recorder.entry
        entry.awaiting_check = None
        self._start_attempt(attempt)
        # History is read before this attempt adds to the log: it holds what came before.
        retry = retry_note(self.workspace, self.recorder.draft.report) if attempt > 1 else ""
        turn = self.context.turn(
            self.feature, verification=entry.last_verification if attempt > 1 or entry.reopened else None,
            recent_ids=self.recorder.books.state.recent_completed, interrupted_attempt=interrupted,
            regression_note=self.watch.note if self.watch else "",
            reserved_tokens=self.watch.note_tokens if self.watch else 0,
            view=AttemptView(retry=retry, workspace=workspace_section(self.settings.environment.at(self.workspace))),
            files=known_files(self.workspace, self.command, entry,
                              self.watch.assessment.predicted_footprint if self.watch else ()),
        )
        self.recorder.in_progress(attempt)
        self.recorder.draft.replay_stats = turn.context.replay_stats or self.recorder.draft.replay_stats
        outcome, verification = self._run_agent(attempt, turn)
        report = outcome.report.model_dump() if outcome.report else unreported(outcome.final_text) or self.recorder.draft.report
        learned = outcome.report.prevention if outcome.report else None
        return AttemptStep(_attempt_record(attempt, outcome), verification, report, learned)

    def _start_attempt(self, attempt: int) -> None:
        """Mark the attempt as running, durably, with the check's files found before the first one."""
        entry = self.recorder.entry
        entry.status, entry.reason = "in_progress", None
        entry.started_at = entry.started_at or now_ms()
        self.check.record_check_files()
        settings = self.settings
        chosen = attempt_model(settings.config, attempt, settings.max_attempts)
        self.recorder.attempt_started(
            attempt, settings.max_attempts, settings.index, settings.total, model=chosen.model, escalated=chosen.escalated
        )

    def _run_agent(self, attempt: int, turn: FeatureTurn) -> tuple[AttemptOutcome, CheckResult]:
        """The agent's attempt with the check's files guarded, then the check."""
        entry, recorder = self.recorder.entry, self.recorder
        recorder.prompt_sent(attempt, turn.prompt)
        guard = self.check.before_agent()
        session = self._session(guard.files, attempt)
        outcome = self.settings.agent.attempt(session, turn.context.history, turn.prompt, self.feature.id)
        if (foreign := remove_foreign_git(self.workspace)) is not None:  # before any git of ours could read it
            recorder.events.warn(f"{self.feature.id}: removed {foreign}, which a command of the agent made in a "
                                 "project that was not a git repository when the run started")
        recorder.agent_done(attempt, outcome)
        self.hopeless = outcome.final
        if tampered := self.check.tampered(attempt, guard):
            return outcome, tampered
        # The agent's work is done and recorded: a kill during the check re-runs only the check.
        entry.awaiting_check = AwaitingCheck(
            attempt=attempt, record=_attempt_record(attempt, outcome),
            report=outcome.report.model_dump() if outcome.report else None,
        )
        recorder.record(fsync=False)  # a kill needs only the flush; the pass record fsyncs it
        return outcome, self.check.run(attempt, reported=outcome.report is not None, stop=outcome.stop)

    # ---- after the check ----------------------------------------------------------------
    def _settle(self, attempt: int, step: AttemptStep) -> None:
        entry, recorder = self.recorder.entry, self.recorder
        if step.verification.success and (failure := self.landing.land(self, attempt)) is not None:
            recorder.verified(failure)  # a conflict or a failed re-check where the pass was to land
            step = AttemptStep(step.record, failure, step.report, step.learned)
        step.record.verification = step.verification
        step.record.regression_checks = self.watch.records() if self.watch else []
        recorder.draft.attempts = with_attempt(recorder.draft.attempts, step.record)
        recorder.draft.report = step.report
        entry.attempts = attempt
        entry.awaiting_check = None
        entry.last_verification = step.record.verification
        recorder.book()
        if step.verification.success:
            self._record_pass()
            # After a failure, what the report says prevents it ("" keeps the default prevention);
            # None: no failure to learn from.
            self.finish_pass(self.feature.id, step.report, (step.learned or "") if attempt > 1 else None)
        elif (defect := self._disputed(step)) is not None:
            self._needs_review(defect)
        else:
            self.context.record_failure(self.feature.id, attempt, step.record.verification, self._failed_files())
            entry.status = "pending"  # between attempts: nothing is running
            recorder.write_log()
            recorder.record()
        self.landing.settled(self)

    def _failed_files(self) -> list[str]:
        """What the failing attempt changed (still in the tree) and what its check names."""
        entry = self.recorder.entry
        if self.watch is not None:
            return sorted(self.watch.footprint(entry).files())
        return entry.check_files.files if entry.check_files else []

    def _record_pass(self) -> None:
        """Record the pass, and what is left to do after it, before doing any of it."""
        entry, books = self.recorder.entry, self.recorder.books
        # The footprint before the status: the guard's index, in another worker's thread, takes
        # a feature it finds passed to have its final footprint (`run/checks/guard/footprint_index`).
        entry.footprint = self.watch.footprint(entry) if self.watch else entry.footprint
        score_prediction(entry)  # the Impact Agent's prediction against what the feature changed
        entry.status, entry.reopened = "passed", False
        entry.completed_at = now_ms()
        books.state.iteration += 1
        entry.iteration = books.state.iteration
        message = base = None
        if self.settings.config.commit and git_checkpoint.is_git_repo(self.workspace):
            message = f"orchestrate: {self.feature.id}: {self.feature.name}"
            base = git_checkpoint.head_commit(self.workspace)
        entry.finishing = PassToFinish(checkpoint_message=message, checkpoint_base=base)
        # The log first: if the kill comes before the state says passed, the check runs again
        # and its record replaces this one.
        self.recorder.write_log()
        if entry.last_verification and entry.last_verification.output:
            # The log keeps the passing check's output; in the state it would only weigh on
            # every snapshot (4,000 characters a feature is 40 MB at 10,000 features).
            entry.last_verification = entry.last_verification.model_copy(update={"output": ""})
        self.recorder.record()

    def _disputed(self, step: AttemptStep) -> DefectiveCheck | None:
        """The agent's claim that the check is wrong, when it is the feature's own check that failed."""
        own = self.check.own
        if own is None or own.success or not step.report or not step.report.get("defective_check"):
            return None
        try:
            return DefectiveCheck.model_validate(step.report["defective_check"])
        except ValueError:
            return None

    def _needs_review(self, defect: DefectiveCheck) -> None:
        """No more attempts: a person reviews the check; the agent's evidence is printed and kept as the reason."""
        self.recorder.events.warn(
            f"{self.feature.id} needs review: the agent reports its check is defective at {defect.where()}: "
            f"{defect.evidence} (fix the check if it is wrong, then run `orchestrate run` again: the feature is retried)",
            id=self.feature.id,
        )
        self._settle_unpassed("needs_review", f"check reported defective at {defect.where()}: {defect.evidence}")

    def _fail(self) -> None:
        self._settle_unpassed("failed", self.hopeless or f"check still failing after {self.recorder.entry.attempts} attempt(s)")

    def _settle_unpassed(self, status: FeatureStatus, reason: str) -> None:
        """End the feature without a pass: its work parked, its report kept, the books closed."""
        entry, recorder = self.recorder.entry, self.recorder
        entry.status, entry.reopened, entry.reason = status, False, reason
        if self.watch:
            self.watch.failed(entry)
        if recorder.draft.report:
            self.context.record_report(self.feature.id, recorder.draft.report)
        entry.completed_at = now_ms()
        recorder.books.state.iteration += 1
        entry.iteration = recorder.books.state.iteration
        recorder.books.count_completed(self.feature.id)
        recorder.book()
        recorder.write_log()
        recorder.record()

    def _session(self, protected: list[Path], attempt: int) -> AgentSession:
        config = self.settings.config
        chosen = attempt_model(config, attempt, self.settings.max_attempts)
        if chosen.model not in self.recorder.entry.models:
            self.recorder.entry.models.append(chosen.model)
        policy = configured_policy(config.security.deny)
        tool_context = ToolContext(
            environment=self.settings.environment.at(self.workspace), protected=frozenset(protected),
            bash_timeout=config.bash_timeout, policy=policy,
        )
        return AgentSession(
            client=self.client, model=chosen.model, system=self.settings.system, tool_context=tool_context,
            max_turns=config.max_turns, max_output_tokens=config.max_output_tokens,
            mask_after_tokens=config.mask_after_tokens, on_event=self.recorder.agent_event, attempt=attempt,
            request_fields=chosen.request_fields(),
        )


def _attempt_record(attempt: int, outcome: AttemptOutcome) -> AttemptRecord:
    """The attempt's `attemptHistory` entry; its verification is added once the check ran."""
    return AttemptRecord(attempt=attempt, stop=outcome.stop, turns=outcome.turns, tool_calls=outcome.tool_calls,
                         masked_outputs=outcome.masked, error=outcome.error, model=outcome.model, tokens=outcome.usage,
                         cost_usd=round(outcome.cost_usd, 6), tools=outcome.tool_lines)
