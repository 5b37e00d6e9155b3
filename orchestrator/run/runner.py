"""The run: the queue of features, a feature job for each, the summarize schedule, the verdict.

The `Runner` is given its collaborators (`RunParts`: the model client, the context view, the
state store, the working memory, the verifier, the feature logs); `orchestrator.run.factory`
builds the real ones, tests and benchmarks pass their own. One feature's attempts are a
`FeatureJob` (`orchestrator.run.attempt.feature_job`). How the features are worked is the run's
`Schedule`: one after another (`OneAtATime`, here), or N at once (`run/parallel/scheduler`),
given to the runner as it is built.

Control flow by exceptions: a stop (`StopError`: a limit, an unreachable API, git), refused
credentials (`AuthError`) and an interrupt (`KeyboardInterrupt`, which SIGTERM raises too) are
caught in `run()` alone, which saves state and returns the run's `Outcome` (`verdict`); the CLI
alone turns that into an exit code.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from orchestrator.config import RunConfig
from orchestrator.git.carried_files import record_run_time
from orchestrator.git.run_git import CheckpointError
from orchestrator.llm.client import ModelClient
from orchestrator.llm.costs.reservations import SpendPool
from orchestrator.llm.costs.spend import RunTotals, Spend
from orchestrator.run.attempt.agent_seam import BUILTIN_AGENT, Agent
from orchestrator.run.attempt.context_view import ContextView
from orchestrator.run.attempt.feature_job import FeatureJob, JobSettings
from orchestrator.run.attempt.recorder import FeatureRecorder, LogHeading
from orchestrator.run.base.books import RunBooks
from orchestrator.run.base.feature_logs import FeatureLogs
from orchestrator.run.base.feature_order import RunQueue, ordered, reconcile
from orchestrator.run.checks.clean_checkout import verification_tree
from orchestrator.run.checks.final_verification import final_verification
from orchestrator.run.checks.guard.regression import RegressionGuard, guard_budget
from orchestrator.run.checks.impact_agent.impact import predict_pending
from orchestrator.run.checks.impact_agent.impact_model import model_predictions
from orchestrator.run.checks.integrity import Integrity
from orchestrator.run.checks.running.check_command import Verifier
from orchestrator.run.checks.running.check_pool import check_runner, default_concurrency
from orchestrator.run.checks.trust import distrust_unproven_passes
from orchestrator.run.finishing import PassFinisher
from orchestrator.run.stop_reasons import internal_error_message, is_write_failure, write_failure_message
from orchestrator.run.verdict import Outcome, RunResult, Verdict, run_verdict
from orchestrator.safety.environment import CommandEnvironment
from orchestrator.safety.processes.signals import signals_held
from orchestrator.spec.feature_spec import Feature
from orchestrator.spec.load import LoadedSpec
from orchestrator.spec.selection import select
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.event_kinds import Notice, RunFinished, RunStarted, Summarization
from orchestrator.store.events import EventSink
from orchestrator.store.memory_entries import Insight
from orchestrator.store.run_state import RunState, now_ms
from orchestrator.store.state import StateStore
from orchestrator.store.working_memory import WorkingMemory
from orchestrator.user_errors import AuthError, StopError, UsageError
from shared_base.files import LinkRefused


@dataclass
class RunOptions:
    only: str | None = None
    shard: str | None = None
    resets: list[str] = field(default_factory=list)
    # Where the agent works and checkpoints are made (`--branch`: a worktree); None: the project.
    workspace: Path | None = None
    billing: str | None = None  # who pays the agent's calls, said at the start (`claude_code.billing`)
    # True when the Ctrl-C was the caller's own (the demo's): the run says it as a note (-v), not
    # a warning to act on, since the caller resumes it itself.
    own_interrupt: Callable[[], bool] | None = None


@dataclass
class RunParts:
    """The run's collaborators: built by `orchestrator.run.factory.build_parts`, or by a test."""

    client: ModelClient
    spend: Spend  # what `client` counts its calls into
    context: ContextView
    store: StateStore
    memory: WorkingMemory
    verifier: Verifier
    logs: FeatureLogs
    environment: CommandEnvironment  # where every command the model causes runs (the verifier holds it too)
    agent: Agent = BUILTIN_AGENT  # who makes each attempt (`--agent`)
    pool: SpendPool | None = None  # `--jobs N`: the spend and stop token `client` shares with every worker's


class Schedule(Protocol):
    """How a run works its features; built by the runner, from the runner, as the runner is built."""

    def features(self) -> None:
        """Every runnable feature, to its end."""
        ...

    def final_verification(self, verify: Callable[[], list[str]]) -> list[str]:
        """`verify()`: the ids whose checks fail on the final tree."""
        ...

    def before_end_summary(self) -> None:
        """Called just before the run's last summary."""
        ...


class Runner:
    """Runs the selected features of one spec in one project."""

    def __init__(
        self, loaded: LoadedSpec, config: RunConfig, options: RunOptions, paths: ProjectPaths, events: EventSink,
        parts: RunParts, schedule: Callable[[Runner], Schedule] | None = None,
    ) -> None:
        self.loaded, self.spec, self.config, self.options = loaded, loaded.spec, config, options
        self.paths, self.events, self.parts = paths, events, parts
        self.books = RunBooks(parts.store, parts.spend)
        self.workspace = options.workspace or paths.root
        self.finisher = PassFinisher(self.books, parts.context, self.workspace, config.commit, events)
        self.system = parts.agent.system_prompt(self.spec, config.context)
        self.selected = select(
            self.spec.ids(), {f.id: f.depends_on for f in self.spec.features}, options.only, options.shard
        )
        self.run_order = ordered(self.spec, self.selected)
        self.positions = {feature_id: index + 1 for index, feature_id in enumerate(self.selected)}
        self.environment = parts.environment.at(self.workspace)
        self.check_runner = check_runner(parts.environment, config.check_timeout)  # re-run checks: guard and final verification
        self.concurrency = config.check_concurrency or default_concurrency()
        self.integrity: Integrity | None = None
        self._resumed = False  # earlier runs spent too: the closing line says which figure covers what
        self.schedule = (schedule or OneAtATime)(self)

    @property
    def state(self) -> RunState:
        return self.books.state

    # ---- the loop -----------------------------------------------------------------------
    def run(self) -> RunResult:
        started = time.monotonic()
        self._load_state()
        # Before any agent works: the ignored files made from now on are the run's.
        record_run_time(self.paths.run_times, ended=False, on_warning=self.events.warn)
        self.books.start_spend()
        self.events.emit(RunStarted(
            run_id=self.state.run_id, spec=str(self.loaded.path), project=str(self.paths.root),
            selected=len(self.selected), already_passed=sum(self.books.status(f) == "passed" for f in self.selected),
            model=self.config.model, context=self.config.context, billing=self.options.billing,
            spent_tokens=self.state.totals.tokens.total or None, spent_usd=round(self.state.totals.cost_usd, 6) or None,
        ))
        self._resumed = self.state.totals.tokens.total > 0 or self.state.totals.cost_usd > 0
        verdict = Verdict(Outcome.PASSED)
        try:
            verdict = self._work()
        finally:  # also when a planted link (or a bug) stops the run: what was done is saved
            verdict = self._save_final(verdict)
        if verdict.message:
            self.events.emit(Notice(type=self._notice_kind(verdict.outcome), message=verdict.message))
        result = RunResult(
            verdict.outcome, self.state, self.selected, verdict.message, int((time.monotonic() - started) * 1000)
        )
        self._emit_finished(result)
        return result

    def _notice_kind(self, outcome: Outcome) -> Literal["error", "warning", "note"]:
        if outcome is not Outcome.INTERRUPTED:
            return "error"
        own = self.options.own_interrupt
        return "note" if own is not None and own() else "warning"

    def _work(self) -> Verdict:
        """Every runnable feature, then the last summary; what stopped the run becomes its outcome."""
        try:
            predict_pending(self.spec, self.state, self.guarding().guard, self.selected)  # the Impact Agent
            if self.config.impact_model:  # and its optional model call
                model_predictions(self.parts.client, self.config.impact_model, self.spec, self.state, self.selected,
                                  self.workspace, self.events.warn)
            self.schedule.features()
            regressed = self.schedule.final_verification(self._final_verification)
            self.schedule.before_end_summary()
            self.summarize("end")
            if regressed:
                return Verdict(Outcome.FAILED, (f"regressed on the final tree: {', '.join(regressed)} (their checks "
                                                "fail now); the next run rebuilds them with the failure fed back"))
            return run_verdict({fid: self.books.status(fid) for fid in self.selected})
        except CheckpointError as err:  # --jobs N: a worktree or merge git could not do
            return Verdict(Outcome.STOPPED, f"git failed: {err}; fix that, then run again to resume")
        except StopError as err:  # a limit, an API that stayed away
            return Verdict(Outcome.STOPPED, str(err))
        except AuthError as err:
            return Verdict(Outcome.AUTH_ERROR, str(err))
        except KeyboardInterrupt:
            return Verdict(Outcome.INTERRUPTED, "interrupted; state saved, run again to resume")
        except LinkRefused:
            raise  # a link planted in .autonomous/: the CLI stops with exit 2, writing nothing through it
        except OSError as err:  # a full disk, a read-only mount: what was written so far still counts
            if is_write_failure(err, self.paths.autonomous):
                return Verdict(Outcome.STOPPED, write_failure_message(err))
            return Verdict(Outcome.INTERNAL_ERROR, internal_error_message(err))
        except UsageError:
            raise
        except Exception as err:  # a bug: said as one, with its own exit code; what was done is saved
            return Verdict(Outcome.INTERNAL_ERROR, internal_error_message(err))

    def _save_final(self, verdict: Verdict) -> Verdict:
        record_run_time(self.paths.run_times, ended=True, on_warning=self.events.warn)
        self.state.stop_reason = verdict.message or None
        self.books.book_totals()
        try:
            with signals_held():
                self.books.store.save(self.state)
        except LinkRefused:
            raise
        except OSError as err:
            return Verdict(Outcome.STOPPED, (f"the final state could not be saved ({err}); the journal and feature "
                                             "logs keep what was done: fix that, then run again to resume"))
        return verdict

    def settle(self, feature: Feature) -> None:
        """`feature` ends without running: blocked by a dependency, or out of attempts after a kill."""
        entry = self.state.feature(feature.id)
        entry.completed_at = now_ms()
        if entry.status == "failed":
            self.books.count_completed(feature.id)
        self.recorder_for(feature).settled()

    def job_settings(self, feature: Feature, environment: CommandEnvironment) -> JobSettings:
        """What `feature`'s job reads, with the agent's commands run in `environment`."""
        return JobSettings(
            config=self.config, spec=self.spec, system=self.system, environment=environment,
            max_attempts=self.attempts_for(feature), index=self.positions.get(feature.id, 0), total=len(self.selected),
            agent=self.parts.agent,
        )

    def guarding(self) -> Integrity:
        """The run's integrity collaborator: built once the state is loaded, before any feature starts."""
        if self.integrity is None:
            self.integrity = self._integrity()
        return self.integrity

    def _integrity(self) -> Integrity:
        guard = RegressionGuard(
            self.spec, self.state, mode=self.config.regression, concurrency=self.concurrency, runner=self.check_runner,
            on_warning=self.events.warn, budget=guard_budget(self.config),
        )
        return Integrity.for_run(self.workspace, self.spec, guard, self.events, self.config.commit)

    def _final_verification(self) -> list[str]:
        """Every passed feature's check on the tree the run leaves behind; the ids that fail there."""
        if not self.config.final_verify:
            return []
        with verification_tree(
            self.workspace, self.paths.run_times, committed=self.config.commit, on_warning=self.events.warn,
            share_dirs=self.environment.sandbox.active,
        ) as tree:
            return final_verification(
                tree, self.spec, self.books, self.parts.logs, self.events, runner=self.check_runner,
                concurrency=self.concurrency,
            )

    def recorder_for(self, feature: Feature) -> FeatureRecorder:
        heading = LogHeading(self.config.model, self.config.context, self.spec.check_command(feature))
        return FeatureRecorder(feature, self.books, self.parts.logs, self.events, self.parts.memory, heading)

    # ---- summarization ------------------------------------------------------------------
    def maybe_summarize(self) -> None:
        if self.state.summarization.completed_since_summary >= self.config.summarize_every:
            self.summarize(f"every-{self.config.summarize_every}")

    def summarize(self, trigger: str) -> None:
        schedule = self.state.summarization
        if not schedule.unsummarized:
            return
        ids = list(schedule.unsummarized)
        result = self.parts.context.summarize(ids, trigger)
        self.books.summarized(ids)
        schedule.summaries += 1
        schedule.last_summarized_at = now_ms()
        self.books.record(ids[-1])
        self.events.emit(Summarization(
            trigger=trigger, features=ids, success=result.success,
            new_decisions=result.new_decisions, new_failures=result.new_failures, error=result.error,
        ))
        self.parts.memory.append(Insight(trigger=trigger, feature_ids=ids, summary=result.summary,
                                         success=result.success, source=result.source))

    # ---- helpers ------------------------------------------------------------------------
    def _load_state(self) -> None:
        state = self.books.store.load() or RunState()
        state.spec_path = str(self.loaded.path.resolve())
        state.spec_hash = self.loaded.sha256
        state.stop_reason = None
        self.books.state = state
        reconcile(state, self.spec, self.options.resets, self.events.warn)
        if not self.parts.environment.sandbox.active:  # the agent could have written the state: check what it claims
            distrust_unproven_passes(state, self.spec, self.paths, checkpoints=self.config.commit, on_warning=self.events.warn)
        for feature_id in self.options.resets:
            state.feature(feature_id).awaiting_check = None  # redone from the start, agent and all
        self.parts.agent.run_began(state, self.paths.root)  # before any agent of this run works
        self.books.store.save(state)

    def attempts_for(self, feature: Feature) -> int:
        return self.config.max_attempts or self.spec.attempts_for(feature)

    def _emit_finished(self, result: RunResult) -> None:
        counts = {s: sum(self.books.status(fid) == s for fid in self.selected) for s in ("passed", "failed", "blocked")}
        pending = len(self.selected) - sum(counts.values())
        totals = self.state.totals
        self.events.emit(RunFinished(
            outcome=result.outcome.value, exit_code=result.exit_code, passed=counts["passed"],
            failed=counts["failed"], blocked=counts["blocked"], pending=pending, tokens=totals.tokens.total,
            usage=totals.tokens, cost_usd=round(totals.cost_usd, 6), duration_ms=result.duration_ms,
            message=result.message or None, cost_by_model=_cost_by_model(totals),
            unconfirmed_cost_usd=round(totals.unconfirmed_cost_usd, 6) or None,
            unconfirmed_calls=totals.unconfirmed_calls or None, resumed=self._resumed or None,
        ))


def _cost_by_model(totals: RunTotals) -> dict[str, float] | None:
    """USD per model when several models made calls (escalation, or a summarizer model of its own)."""
    if len(totals.by_model) < 2:
        return None
    return {model: round(share.cost_usd, 6) for model, share in sorted(totals.by_model.items())}


class OneAtATime:
    """The features one after another, each in the run's workspace, its pass landing in place."""

    def __init__(self, run: Runner) -> None:
        self.run = run

    def features(self) -> None:
        run = self.run
        queue = RunQueue(run.run_order)  # after reconcile, which may make features pending again
        run.finisher.finish_interrupted(run.parts.logs)
        while (feature := self._next_feature(queue)) is not None:
            self._job(feature).run()
            run.maybe_summarize()

    def final_verification(self, verify: Callable[[], list[str]]) -> list[str]:
        return verify()

    def before_end_summary(self) -> None:
        return None

    def _next_feature(self, queue: RunQueue) -> Feature | None:
        feature, settled = queue.next(self.run.state, self.run.attempts_for)
        for candidate in settled:
            self.run.settle(candidate)
        return feature

    def _job(self, feature: Feature) -> FeatureJob:
        """The job for `feature`, in the project directory, with the run's collaborators."""
        run = self.run
        return FeatureJob(
            feature, workspace=run.workspace, client=run.parts.client, context=run.parts.context,
            verifier=run.parts.verifier, recorder=run.recorder_for(feature), settings=run.job_settings(feature, run.environment),
            finish_pass=run.finisher.finish, integrity=run.integrity,
        )
