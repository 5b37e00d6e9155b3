"""The run: the queue of features, a feature job for each, the summarize schedule, the verdict.

The `Runner` is given its collaborators (`RunParts`: the model client, the context view, the
state store, the working memory, the verifier, the feature logs); `orchestrator.run.factory`
builds the real ones, tests and benchmarks pass their own. One feature's attempts are a
`FeatureJob` (`orchestrator.run.attempt.feature_job`).

Control flow by exceptions: a limit (`LimitReached`), an unreachable API (`ApiUnavailable`),
refused credentials (`ApiAuthError`) and an interrupt (`KeyboardInterrupt`, which SIGTERM
raises too) are caught in `run()` alone, which saves state and maps them to exit codes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from context_agent.files import LinkRefused
from orchestrator.config import RunConfig
from orchestrator.git.run_git import CheckpointError
from orchestrator.llm.client import ModelClient
from orchestrator.llm.errors import ApiAuthError, ApiUnavailable, LimitReached
from orchestrator.llm.spend import Spend
from orchestrator.run.attempt.agent_seam import BUILTIN_AGENT, Agent
from orchestrator.run.attempt.context_view import ContextView
from orchestrator.run.attempt.feature_job import FeatureJob, JobSettings
from orchestrator.run.attempt.recorder import FeatureRecorder, LogHeading
from orchestrator.run.books import RunBooks
from orchestrator.run.checks.carried_files import record_run_time
from orchestrator.run.checks.check_command import Verifier
from orchestrator.run.checks.check_pool import check_runner, default_concurrency
from orchestrator.run.checks.clean_checkout import verification_tree
from orchestrator.run.checks.final_verification import final_verification
from orchestrator.run.checks.impact import predict_pending
from orchestrator.run.checks.impact_model import model_predictions
from orchestrator.run.checks.integrity import Integrity
from orchestrator.run.checks.regression import RegressionGuard, guard_budget
from orchestrator.run.checks.trust import distrust_unproven_passes
from orchestrator.run.feature_logs import FeatureLogs
from orchestrator.run.feature_order import RunQueue, ordered, reconcile
from orchestrator.run.finishing import PassFinisher
from orchestrator.run.stop_reasons import internal_error_message, is_write_failure, write_failure_message
from orchestrator.run.verdict import run_verdict
from orchestrator.safety.environment import CommandEnvironment
from orchestrator.safety.signals import signals_held
from orchestrator.spec.feature_spec import Feature
from orchestrator.spec.load import LoadedSpec
from orchestrator.spec.selection import select
from orchestrator.store.event_kinds import Notice, RunFinished, RunStarted, Summarization
from orchestrator.store.events import EventSink
from orchestrator.store.paths import ProjectPaths
from orchestrator.store.run_state import RunState, RunTotals, now_ms
from orchestrator.store.state import StateStore
from orchestrator.store.working_memory import WorkingMemory
from orchestrator.user_errors import (
    EXIT_FAILED,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_STOPPED,
    EXIT_USAGE,
    UsageError,
)


@dataclass
class RunOptions:
    only: str | None = None
    shard: str | None = None
    resets: list[str] = field(default_factory=list)
    # Where the agent works and checkpoints are made (`--branch`: a worktree); None: the project.
    workspace: Path | None = None
    billing: str | None = None  # who pays the agent's calls, said at the start (`claude_code.billing`)


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


@dataclass
class RunResult:
    exit_code: int
    outcome: str  # "passed" | "failed" | "stopped" | "interrupted" | "auth_error" | "internal_error"
    state: RunState
    selected: list[str]
    message: str = ""
    duration_ms: int = 0


class Runner:
    """Runs the selected features of one spec in one project."""

    def __init__(
        self, loaded: LoadedSpec, config: RunConfig, options: RunOptions, paths: ProjectPaths, events: EventSink,
        parts: RunParts,
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
        verdict = (EXIT_OK, "passed", "")
        try:
            verdict = self._work()
        finally:  # also when a planted link (or a bug) stops the run: what was done is saved
            verdict = self._save_final(*verdict)
        exit_code, outcome, message = verdict
        if message:
            self.events.emit(Notice(type="error" if exit_code != EXIT_INTERRUPTED else "warning", message=message))
        result = RunResult(
            exit_code, outcome, self.state, self.selected, message, int((time.monotonic() - started) * 1000)
        )
        self._emit_finished(result)
        return result

    def _work(self) -> tuple[int, str, str]:
        """Every runnable feature, then the last summary; a stop maps to its exit code here."""
        try:
            self.integrity = self._integrity()
            predict_pending(self.spec, self.state, self.integrity.guard, self.selected)  # the Impact Agent
            if self.config.impact_model:  # and its optional model call
                model_predictions(self.parts.client, self.config.impact_model, self.spec, self.state, self.selected,
                                  self.workspace, self.events.warn)
            self._features()
            regressed = self._final_verification()
            self._summarize("end")
            if regressed:
                return EXIT_FAILED, "failed", (f"regressed on the final tree: {', '.join(regressed)} (their checks fail "
                                               "now); the next run rebuilds them with the failure fed back")
            return run_verdict({fid: self.books.status(fid) for fid in self.selected})
        except (LimitReached, ApiUnavailable) as err:
            return EXIT_STOPPED, "stopped", str(err)
        except ApiAuthError as err:
            return EXIT_USAGE, "auth_error", str(err)
        except KeyboardInterrupt:
            return EXIT_INTERRUPTED, "interrupted", "interrupted; state saved, run again to resume"
        except LinkRefused:
            raise  # a link planted in .autonomous/: the CLI stops with exit 2, writing nothing through it
        except OSError as err:  # a full disk, a read-only mount: what was written so far still counts
            if is_write_failure(err, self.paths.autonomous):
                return EXIT_STOPPED, "stopped", write_failure_message(err)
            return EXIT_INTERNAL, "internal_error", internal_error_message(err)
        except CheckpointError as err:  # --jobs N: a worktree or merge git could not do
            return EXIT_STOPPED, "stopped", f"git failed: {err}; fix that, then run again to resume"
        except UsageError:
            raise
        except Exception as err:  # a bug: said as one, with its own exit code; what was done is saved
            return EXIT_INTERNAL, "internal_error", internal_error_message(err)

    def _features(self) -> None:
        """Every runnable feature, one after another."""
        queue = RunQueue(self.run_order)  # after reconcile, which may make features pending again
        self.finisher.finish_interrupted(self.parts.logs)
        while (feature := self._next_feature(queue)) is not None:
            self._job(feature).run()
            self._maybe_summarize()

    def _save_final(self, exit_code: int, outcome: str, message: str) -> tuple[int, str, str]:
        record_run_time(self.paths.run_times, ended=True, on_warning=self.events.warn)
        self.state.stop_reason = message or None
        self.books.book_totals()
        try:
            with signals_held():
                self.books.store.save(self.state)
        except LinkRefused:
            raise
        except OSError as err:
            return EXIT_STOPPED, "stopped", (f"the final state could not be saved ({err}); the journal and feature "
                                             "logs keep what was done: fix that, then run again to resume")
        return exit_code, outcome, message

    def _next_feature(self, queue: RunQueue) -> Feature | None:
        feature, settled = queue.next(self.state, self._attempts_for)
        for candidate in settled:
            entry = self.state.feature(candidate.id)
            # Settled without running: blocked by a dependency, or out of attempts after a kill.
            entry.completed_at = now_ms()
            if entry.status == "failed":
                self.books.count_completed(candidate.id)
            self._recorder(candidate).settled()
        return feature

    def _job(self, feature: Feature) -> FeatureJob:
        """The job for `feature`, in the project directory, with the run's collaborators."""
        settings = JobSettings(
            config=self.config, spec=self.spec, system=self.system, environment=self.environment,
            max_attempts=self._attempts_for(feature), index=self.positions.get(feature.id, 0), total=len(self.selected),
            agent=self.parts.agent,
        )
        return FeatureJob(
            feature, workspace=self.workspace, client=self.parts.client, context=self.parts.context,
            verifier=self.parts.verifier, recorder=self._recorder(feature), settings=settings,
            finish_pass=self.finisher.finish, integrity=self.integrity,
        )

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

    def _recorder(self, feature: Feature) -> FeatureRecorder:
        heading = LogHeading(self.config.model, self.config.context, self.spec.check_command(feature))
        return FeatureRecorder(feature, self.books, self.parts.logs, self.events, self.parts.memory, heading)

    # ---- summarization ------------------------------------------------------------------
    def _maybe_summarize(self) -> None:
        if self.state.summarization.completed_since_summary >= self.config.summarize_every:
            self._summarize(f"every-{self.config.summarize_every}")

    def _summarize(self, trigger: str) -> None:
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
        self.parts.memory.append("wm_insight", trigger=trigger, featureIds=ids, summary=result.summary,
                                 success=result.success, source=result.source)

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

    def _attempts_for(self, feature: Feature) -> int:
        return self.config.max_attempts or self.spec.attempts_for(feature)

    def _emit_finished(self, result: RunResult) -> None:
        counts = {s: sum(self.books.status(fid) == s for fid in self.selected) for s in ("passed", "failed", "blocked")}
        pending = len(self.selected) - sum(counts.values())
        totals = self.state.totals
        self.events.emit(RunFinished(
            outcome=result.outcome, exit_code=result.exit_code, passed=counts["passed"],
            failed=counts["failed"], blocked=counts["blocked"], pending=pending, tokens=totals.tokens.total,
            usage=totals.tokens, cost_usd=round(totals.cost_usd, 6), duration_ms=result.duration_ms,
            message=result.message or None, cost_by_model=_cost_by_model(totals),
            unconfirmed_cost_usd=round(totals.unconfirmed_cost_usd, 6) or None, resumed=self._resumed or None,
        ))


def _cost_by_model(totals: RunTotals) -> dict[str, float] | None:
    """USD per model when several models made calls (escalation, or a summarizer model of its own)."""
    if len(totals.by_model) < 2:
        return None
    return {model: round(share.cost_usd, 6) for model, share in sorted(totals.by_model.items())}
