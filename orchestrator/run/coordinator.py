"""The run loop: pick feature, build prompt, run agent, verify, record, maybe summarize.

Control flow by exceptions: a limit (`LimitReached`), an unreachable API (`ApiUnavailable`),
refused credentials (`ApiAuthError`) and an interrupt (`KeyboardInterrupt`, which SIGTERM
raises too) are caught in `run()` alone, which saves state and maps them to exit codes.
"""

from __future__ import annotations

import contextlib
import hashlib
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from context_agent import ContextAgent, render_project_context
from orchestrator.config import RunConfig
from orchestrator.llm.client import ApiAuthError, ApiUnavailable, LimitReached, ModelClient, Spend
from orchestrator.run import check_influence, protect
from orchestrator.run import checkpoint as git_checkpoint
from orchestrator.run.agent_loop import AgentSession, AttemptOutcome, run_agent
from orchestrator.run.prompts import feature_prompt, system_prompt
from orchestrator.run.scheduler import RunQueue, ordered, reconcile
from orchestrator.run.strategies import StrategyContext, build_strategy_context
from orchestrator.run.verify import VerificationResult, run_check
from orchestrator.safety.secrets import scrubbed_environment
from orchestrator.spec.load import Feature, LoadedSpec
from orchestrator.spec.selection import select
from orchestrator.store.atomic import LinkRefused
from orchestrator.store.events import EventSink
from orchestrator.store.feature_log import (
    AttemptRecord,
    ReplayStats,
    build_feature_log,
    find_feature_log,
    write_feature_log,
)
from orchestrator.store.paths import ProjectPaths
from orchestrator.store.state import AwaitingCheck, CheckFiles, PassToFinish, RunState, StateStore, now_ms
from orchestrator.store.working_memory import WorkingMemory
from orchestrator.tools import ToolContext
from orchestrator.tools.shell_policy import ShellPolicy

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_STOPPED, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
RECENT_KEPT = 50  # completed feature ids kept for the window strategy


@dataclass
class RunOptions:
    only: str | None = None
    shard: str | None = None
    resets: list[str] = field(default_factory=list)


@dataclass
class RunResult:
    exit_code: int
    outcome: str  # "passed" | "failed" | "stopped" | "interrupted" | "auth_error"
    state: RunState
    selected: list[str]
    message: str = ""
    duration_ms: int = 0


class Runner:
    """Runs the selected features of one spec in one project."""

    def __init__(
        self,
        loaded: LoadedSpec,
        config: RunConfig,
        options: RunOptions,
        paths: ProjectPaths,
        events: EventSink,
        sdk: Any = None,
    ) -> None:
        self.loaded = loaded
        self.spec = loaded.spec
        self.config = config
        self.options = options
        self.paths = paths
        self.events = events
        self.store = StateStore(paths, on_warning=events.warn)
        self.spend = Spend()
        self.client = ModelClient(config, sdk, self.spend, on_retry=events.warn, journal=self.store.record_spend)
        self.context = ContextAgent(
            paths.root,
            features=self.spec.features,
            model_call=self.client.summarizer_call,
            summarizer_model=config.summarizer_model,
            on_event=events.context_event,
        )
        self.memory = WorkingMemory(paths.working_memory, on_warning=events.warn, backups_dir=paths.backups_dir)
        self.system = system_prompt(self.spec, replay=config.context == "replay")
        self.selected = select(
            self.spec.ids(), {f.id: f.depends_on for f in self.spec.features}, options.only, options.shard
        )
        self.run_order = ordered(self.spec, self.selected)
        self.positions = {feature_id: index + 1 for index, feature_id in enumerate(self.selected)}
        self.state = RunState()
        self.check_env = self._environment()
        # Per feature: the guard of an attempt whose changes to protected files stuck.
        self._unrestored: dict[str, protect.Guard] = {}
        self.influence = check_influence.InfluenceWatch(paths.root, strict=config.strict_checks, on_warning=events.warn)

    # ---- the loop -----------------------------------------------------------------------
    def run(self) -> RunResult:
        started = time.monotonic()
        self.state = self._load_state()
        self._start_spend()
        self.events.emit(
            "run_started", runId=self.state.run_id, spec=str(self.loaded.path), project=str(self.paths.root),
            selected=len(self.selected), alreadyPassed=sum(self._status(f) == "passed" for f in self.selected),
            model=self.config.model, context=self.config.context,
        )
        exit_code, outcome, message = EXIT_OK, "passed", ""
        self.queue = RunQueue(self.run_order)  # after reconcile, which may make features pending again
        try:
            self._finish_interrupted_passes()
            while (feature := self._next_feature()) is not None:
                self._run_feature(feature)
                self._maybe_summarize()
            self._summarize("end")
            exit_code, outcome = self._final_verdict()
        except LimitReached as err:
            exit_code, outcome, message = EXIT_STOPPED, "stopped", str(err)
        except ApiUnavailable as err:
            exit_code, outcome, message = EXIT_STOPPED, "stopped", str(err)
        except ApiAuthError as err:
            exit_code, outcome, message = EXIT_USAGE, "auth_error", str(err)
        except KeyboardInterrupt:
            exit_code, outcome, message = EXIT_INTERRUPTED, "interrupted", "interrupted; state saved, run again to resume"
        except LinkRefused:
            raise  # a link planted in .autonomous/: the CLI stops with exit 2, writing nothing through it
        except OSError as err:  # a full disk, a read-only mount: what was written so far still counts
            exit_code, outcome = EXIT_STOPPED, "stopped"
            message = f"could not write the run's files ({err}); fix that, then run again to resume"
        finally:
            self.state.stop_reason = message or None
            self._book_totals()
            try:
                with _signals_held():
                    self.store.save(self.state)
            except LinkRefused:
                raise
            except OSError as err:
                exit_code, outcome = EXIT_STOPPED, "stopped"
                message = (f"the final state could not be saved ({err}); the journal and feature logs keep "
                           "what was done: fix that, then run again to resume")
        if message:
            self.events.emit("error" if exit_code != EXIT_INTERRUPTED else "warning", message=message)
        result = RunResult(
            exit_code, outcome, self.state, self.selected, message, int((time.monotonic() - started) * 1000)
        )
        self._emit_finished(result)
        return result

    def _next_feature(self) -> Feature | None:
        feature, settled = self.queue.next(self.state, self._attempts_for)
        for candidate in settled:
            entry = self.state.feature(candidate.id)
            # Settled without running: blocked by a dependency, or out of attempts after a kill.
            entry.completed_at = now_ms()
            if entry.status == "failed":
                self._count_completed(candidate.id)
            self._record(candidate.id)
            log = find_feature_log(self.paths, candidate.id)
            self._write_log(candidate, self._previous_attempts(candidate.id), log.report if log else None)
            if entry.status == "blocked":
                self.events.emit("feature_blocked", id=candidate.id, reason=entry.reason)
            else:
                self.events.emit(
                    "feature_finished", id=candidate.id, status=entry.status, attempts=entry.attempts,
                    durationMs=entry.duration_ms, tokens=entry.tokens.total, usage=entry.tokens.dump(),
                    costUsd=round(entry.cost_usd, 6), reason=entry.reason,
                )
            self.memory.append("wm_event", event="status", featureId=candidate.id, status=entry.status, reason=entry.reason)
        return feature

    # ---- one feature --------------------------------------------------------------------
    def _run_feature(self, feature: Feature) -> None:
        """Attempts until the check passes or none are left. Every step is journaled before the
        next begins, so a kill at any instant resumes where it was: the agent's finished work is
        recorded before its check runs (a resumed run runs only the check), and a pass before
        its checkpoint (a resumed run makes or finds the commit, without the model)."""
        entry = self.state.feature(feature.id)
        max_attempts = self._attempts_for(feature)
        resumed = entry.reason == "resumed after an interrupted attempt"
        self.spend.feature_id = feature.id
        self.spend.feature_tokens, self.spend.feature_cost_usd = entry.tokens, entry.cost_usd
        clock, base_duration = time.monotonic(), entry.duration_ms
        attempts_log = self._previous_attempts(feature.id)
        interrupted = entry.attempts + 1 if resumed and entry.awaiting_check is None else None
        if interrupted is not None:
            # The attempt a kill cut short is run again; the log keeps that it was cut short.
            attempts_log.append({"attempt": interrupted, "stop": "interrupted", "verification": None})
        report: dict[str, Any] | None = None
        replay_stats: dict[str, int] | None = None
        try:
            while entry.attempts < max_attempts and entry.status != "passed":
                attempt = entry.attempts + 1
                awaiting = entry.awaiting_check
                if awaiting is not None and awaiting.attempt == attempt:
                    # The agent finished this attempt before the run stopped: only its check is left.
                    self._start_attempt(feature, attempt, max_attempts)
                    self._memory_status(feature.id, attempt)
                    record, report = dict(awaiting.record), awaiting.report or report
                    learned = (awaiting.report or {}).get("summary")
                    verification = self._check(feature, attempt, reported=awaiting.report is not None,
                                               stop=str(record.get("stop")))
                else:
                    entry.awaiting_check = None
                    self._start_attempt(feature, attempt, max_attempts)
                    # History is read before this attempt adds to the log: it holds what came before.
                    strategy = self._strategy_context(feature, interrupted)
                    self._memory_status(feature.id, attempt)
                    replay_stats = strategy.replay_stats or replay_stats
                    interrupted = None
                    outcome, verification = self._attempt(feature, attempt, strategy)
                    record = _attempt_record(attempt, outcome)
                    report = outcome.report.model_dump() if outcome.report else report
                    learned = outcome.report.summary if outcome.report else outcome.final_text
                record["verification"] = verification.to_json()
                attempts_log = _with_attempt(attempts_log, record)
                entry.attempts = attempt
                entry.awaiting_check = None
                entry.last_verification = verification.to_json()
                self._book_feature(entry, clock, base_duration)
                if verification.success:
                    self._record_pass(feature, attempts_log, report, replay_stats)
                    learned = (learned or f"attempt {attempt} passed after the fix") if attempt > 1 else None
                    self._finish_pass(feature.id, report, learned)
                else:
                    self.context.record_failure(feature.id, attempt, entry.last_verification)
                    entry.status = "pending"  # between attempts: nothing is running
                    self._write_log(feature, attempts_log, report, replay_stats)
                    self._record(feature.id)
            if entry.status != "passed":
                entry.status = "failed"
                entry.reason = f"check still failing after {entry.attempts} attempt(s)"
                if report:
                    self.context.record_report(feature.id, report)
                entry.completed_at = now_ms()
                self.state.iteration += 1
                entry.iteration = self.state.iteration
                self._count_completed(feature.id)
                self._book_feature(entry, clock, base_duration)
                self._write_log(feature, attempts_log, report, replay_stats)
                self._record(feature.id)
        except BaseException:
            # Stopped by a limit, an unreachable API or an interrupt: keep what this attempt spent.
            self._book_feature(entry, clock, base_duration)
            self._write_log(feature, attempts_log, report, replay_stats)
            self._record(feature.id)
            raise
        finally:
            self.influence.forget(feature.id)
        self.events.emit(
            "feature_finished", id=feature.id, status=entry.status, attempts=entry.attempts,
            durationMs=entry.duration_ms, tokens=entry.tokens.total, usage=entry.tokens.dump(),
            costUsd=round(entry.cost_usd, 6), reason=entry.reason,
        )
        self.memory.append("wm_event", event="status", featureId=feature.id, status=entry.status, attempts=entry.attempts)

    def _start_attempt(self, feature: Feature, attempt: int, max_attempts: int) -> None:
        """Mark the attempt as running, durably, with the check's files found before the first one."""
        entry = self.state.feature(feature.id)
        entry.status, entry.reason = "in_progress", None
        entry.started_at = entry.started_at or now_ms()
        command = self.spec.check_command(feature)
        command_sha = hashlib.sha256((command or "").encode("utf-8", "surrogatepass")).hexdigest()[:16]
        if entry.check_files is None or entry.check_files.command_sha != command_sha:
            # Recorded before the agent first runs, and kept across kills and resumes: a file
            # the agent creates never becomes part of the check.
            entry.check_files = CheckFiles(
                command_sha=command_sha, files=protect.check_file_keys(self.paths.root, command)
            )
        self._record(feature.id)
        self.events.emit(
            "feature_started", id=feature.id, name=feature.name, attempt=attempt, maxAttempts=max_attempts,
            index=self._position(feature), total=len(self.selected),
        )

    def _memory_status(self, feature_id: str, attempt: int) -> None:
        self.memory.append("wm_event", event="status", featureId=feature_id, status="in_progress", attempt=attempt)

    def _attempt(
        self, feature: Feature, attempt: int, strategy: StrategyContext
    ) -> tuple[AttemptOutcome, VerificationResult]:
        entry = self.state.feature(feature.id)
        verification = entry.last_verification if attempt > 1 else None
        injection = self.context.get_injection(feature.id) if self.config.context == "compressed" else None
        prompt = feature_prompt(
            feature, self.spec, verification=verification,
            project_context=render_project_context(injection) if injection else "",
            strategy_sections=strategy.sections, request_prefix=strategy.request_prefix,
        )
        self.memory.append("text_input", featureId=feature.id, attempt=attempt, text=prompt)
        check_files = entry.check_files.files if entry.check_files else []
        guard = protect.take_guard(
            self.paths.root, self.spec.check_command(feature), feature.protected,
            carried=self._unrestored.pop(feature.id, None), check_files=[self.paths.root / key for key in check_files],
        )
        self.influence.before_attempt(feature.id, self.spec.check_command(feature))
        outcome = run_agent(self._session(guard.files), strategy.history, prompt, feature.id)
        self.memory.append(
            "text_output", featureId=feature.id, attempt=attempt, stop=outcome.stop,
            text=outcome.final_text, report=outcome.report.model_dump() if outcome.report else None,
        )
        changed = protect.guard_changes(guard)
        if not changed:
            # The agent's work is done and recorded: a kill during the check re-runs only the check.
            entry.awaiting_check = AwaitingCheck(
                attempt=attempt, record=_attempt_record(attempt, outcome),
                report=outcome.report.model_dump() if outcome.report else None,
            )
            self._record(feature.id, fsync=False)  # a kill needs only the flush; the pass record fsyncs it
            return outcome, self._check(feature, attempt, reported=outcome.report is not None, stop=outcome.stop)
        stuck = protect.restore(guard, changed)
        if stuck:  # the next attempt compares against the originals, not the agent's version
            self._unrestored[feature.id] = guard
        how = f"could not restore {', '.join(stuck)}" if stuck else "restored"
        verification = VerificationResult(
            command=self.spec.check_command(feature), success=False, exit_code=None, attempt=attempt,
            error=f"protected files changed by the agent ({how}; fix the code, not the check): {', '.join(changed)}",
        )
        self._emit_verification(feature, verification)
        return outcome, verification

    def _check(self, feature: Feature, attempt: int, *, reported: bool, stop: str) -> VerificationResult:
        """Run the feature's check; with none, the agent's report decides."""
        command = self.spec.check_command(feature)
        influencers = self.influence.after_attempt(feature.id, command)
        if influencers and self.config.strict_checks:
            return check_influence.strict_refusal(command, attempt, influencers)
        result = run_check(
            command, self.paths.root, attempt=attempt, timeout=self.config.check_timeout, env=self.check_env
        )
        result.influencers = influencers
        if result.skipped:
            # No check at all: the agent's report decides, and the log says it was not verified.
            result.success = reported
            result.error = None if reported else f"no check command and the agent did not report ({stop})"
        self._emit_verification(feature, result)
        return result

    def _emit_verification(self, feature: Feature, verification: VerificationResult) -> None:
        self.events.emit("verification", id=feature.id, **verification.to_json())
        self.memory.append("wm_event", event="verification", featureId=feature.id, **verification.to_json())

    def _record_pass(
        self, feature: Feature, attempts_log: list[dict[str, Any]], report: dict[str, Any] | None,
        replay_stats: dict[str, int] | None,
    ) -> None:
        """Record the pass, and what is left to do after it, before doing any of it."""
        entry = self.state.feature(feature.id)
        entry.status = "passed"
        entry.completed_at = now_ms()
        self.state.iteration += 1
        entry.iteration = self.state.iteration
        message = None
        base = None
        if self.config.commit and git_checkpoint.is_git_repo(self.paths.root):
            message = f"orchestrate: {feature.id}: {feature.name}"
            base = git_checkpoint.head_commit(self.paths.root)
        entry.finishing = PassToFinish(checkpoint_message=message, checkpoint_base=base)
        # The log first: if the kill comes before the state says passed, the check runs again
        # and its record replaces this one.
        self._write_log(feature, attempts_log, report, replay_stats)
        if entry.last_verification and entry.last_verification.get("output"):
            # The log keeps the passing check's output; in the state it would only weigh on
            # every snapshot (4,000 characters a feature is 40 MB at 10,000 features).
            entry.last_verification = {**entry.last_verification, "output": ""}
        self._record(feature.id)

    def _finish_pass(self, feature_id: str, report: dict[str, Any] | None, learned: str | None) -> None:
        """What follows a recorded pass: the Context Agent's records, the checkpoint commit and
        the summarization count. Safe to do again after a kill (a made commit is found, not made twice)."""
        entry = self.state.feature(feature_id)
        finishing = entry.finishing or PassToFinish()
        if report:
            self.context.record_report(feature_id, report)
        if learned:
            self.context.record_prevention(feature_id, learned)
        self.state.recent_completed = [*(x for x in self.state.recent_completed if x != feature_id), feature_id][
            -RECENT_KEPT:
        ]
        if finishing.checkpoint_message and self.config.commit:
            self._checkpoint(feature_id, finishing)
        entry.finishing = None
        self._count_completed(feature_id)
        self._record(feature_id, fsync=False)  # lost to a power cut, the finishing is done again

    def _checkpoint(self, feature_id: str, finishing: PassToFinish) -> None:
        message = finishing.checkpoint_message or ""
        try:
            # Made by a run killed before it could record it? Then it is not made twice.
            sha = git_checkpoint.find_checkpoint(self.paths.root, message, finishing.checkpoint_base)
            if sha is None:
                sha = git_checkpoint.commit_checkpoint(self.paths.root, message, on_warning=self.events.warn)
        except git_checkpoint.CheckpointError as err:
            self.events.warn(f"checkpoint commit for {feature_id} failed: {err}")
        else:
            if sha:
                self.events.emit("checkpoint", id=feature_id, sha=sha)

    def _finish_interrupted_passes(self) -> None:
        """Finish the passes a killed run recorded but did not finish, without the model."""
        for feature_id, entry in list(self.state.features.items()):
            if entry.finishing is None:
                continue
            log = find_feature_log(self.paths, feature_id)
            learned = None
            if entry.attempts > 1:
                learned = (log and log.summary()) or f"attempt {entry.attempts} passed after the fix"
            self._finish_pass(feature_id, log.report if log else None, learned)

    # ---- summarization ------------------------------------------------------------------
    def _count_completed(self, feature_id: str) -> None:
        """Count a feature that passed or failed for the next summary (saved with its status)."""
        schedule = self.state.summarization
        if feature_id not in schedule.unsummarized:
            schedule.unsummarized.append(feature_id)
            schedule.completed_since_summary += 1

    def _maybe_summarize(self) -> None:
        if self.state.summarization.completed_since_summary >= self.config.summarize_every:
            self._summarize(f"every-{self.config.summarize_every}")

    def _summarize(self, trigger: str) -> None:
        schedule = self.state.summarization
        if not schedule.unsummarized:
            return
        ids = list(schedule.unsummarized)
        # Only `compressed` injects the summary: the other strategies fold memory without a model call.
        result = self.context.summarize(ids, trigger, use_model=self.config.context == "compressed")
        schedule.unsummarized, schedule.completed_since_summary = [], 0
        schedule.summaries += 1
        schedule.last_summarized_at = now_ms()
        self._record(ids[-1])
        self.events.emit(
            "summarization", trigger=trigger, features=ids, success=result.get("success"),
            newDecisions=result.get("newDecisions"), newFailures=result.get("newFailures"), error=result.get("error"),
        )
        self.memory.append("wm_insight", trigger=trigger, featureIds=ids, summary=result.get("summary", ""),
                           success=result.get("success"), source=result.get("source"))

    # ---- helpers ------------------------------------------------------------------------
    def _load_state(self) -> RunState:
        state = self.store.load() or RunState()
        state.spec_path = str(self.loaded.path.resolve())
        state.spec_hash = self.loaded.sha256
        state.stop_reason = None
        self.state = state
        reconcile(state, self.spec, self.options.resets, self.events.warn)
        for feature_id in self.options.resets:
            state.feature(feature_id).awaiting_check = None  # redone from the start, agent and all
        self.store.save(state)
        return state

    def _start_spend(self) -> None:
        totals = self.state.totals
        self.spend.run_cost_usd, self.spend.run_tokens = totals.cost_usd, totals.tokens
        self.spend.summarizer_tokens, self.spend.summarizer_cost_usd = totals.summarizer_tokens, totals.summarizer_cost_usd
        self.spend.calls = totals.api_calls
        self.spend.unconfirmed_cost_usd = totals.unconfirmed_cost_usd

    def _record(self, feature_id: str | None = None, *, fsync: bool = True) -> None:
        """Journal a change to one feature with the money spent up to now. The journal's spend
        lines add to what its last record says, so each record must say all of it."""
        self._book_totals()
        if feature_id is not None and feature_id == self.spend.feature_id:
            entry = self.state.feature(feature_id)
            entry.tokens, entry.cost_usd = self.spend.feature_tokens, self.spend.feature_cost_usd
        self.store.record(self.state, feature_id, fsync=fsync)

    def _book_totals(self) -> None:
        totals = self.state.totals
        totals.cost_usd, totals.tokens, totals.api_calls = self.spend.run_cost_usd, self.spend.run_tokens, self.spend.calls
        totals.summarizer_tokens, totals.summarizer_cost_usd = self.spend.summarizer_tokens, self.spend.summarizer_cost_usd
        totals.unconfirmed_cost_usd = self.spend.unconfirmed_cost_usd

    def _book_feature(self, entry: Any, clock: float, base_duration: int) -> None:
        entry.tokens, entry.cost_usd = self.spend.feature_tokens, self.spend.feature_cost_usd
        entry.duration_ms = base_duration + int((time.monotonic() - clock) * 1000)
        self._book_totals()

    def _environment(self) -> dict[str, str]:
        """Environment for checks and the agent's shell: no secrets, plus where the spec lives
        (specs may ship their checks beside them: `pytest $ORCHESTRATE_SPEC_DIR/tests`)."""
        env = scrubbed_environment(extra_patterns=self.config.security.secret_env_patterns)
        env["ORCHESTRATE_SPEC_DIR"] = str(self.loaded.path.parent.resolve())
        return env

    def _session(self, protected: list[Path]) -> AgentSession:
        policy = ShellPolicy.default().with_extra(self.config.security.deny) if self.config.security.deny else ShellPolicy.default()
        tool_context = ToolContext(
            project_root=self.paths.root,
            protected=frozenset(protected),
            bash_timeout=self.config.bash_timeout,
            policy=policy,
            env=self.check_env,
        )
        return AgentSession(
            client=self.client, model=self.config.model, system=self.system, tool_context=tool_context,
            max_turns=self.config.max_turns, max_output_tokens=self.config.max_output_tokens,
            mask_after_tokens=self.config.mask_after_tokens, on_event=self._agent_event,
        )

    def _agent_event(self, kind: str, **data: Any) -> None:
        """Events from the agent loop: to the event sink, tool calls to working memory too."""
        self.events.emit(kind, **data)
        if kind == "tool_call":
            self.memory.append("wm_event", event="tool_call", featureId=data.get("feature"), tool=data.get("tool"),
                               summary=data.get("summary"), isError=data.get("isError"))

    def _strategy_context(self, feature: Feature, interrupted: int | None) -> StrategyContext:
        return build_strategy_context(
            self.config.context, feature, self.paths, recent_ids=self.state.recent_completed,
            depth=self.config.context_depth, interrupted_attempt=interrupted,
        )

    def _attempts_for(self, feature: Feature) -> int:
        return self.config.max_attempts or self.spec.attempts_for(feature)

    def _status(self, feature: Feature | str) -> str:
        feature_id = feature if isinstance(feature, str) else feature.id
        entry = self.state.features.get(feature_id)
        return entry.status if entry else "pending"

    def _position(self, feature: Feature) -> int:
        return self.positions.get(feature.id, 0)

    def _previous_attempts(self, feature_id: str) -> list[dict[str, Any]]:
        log = find_feature_log(self.paths, feature_id)
        return [record.dump() for record in log.attempt_history] if log else []

    def _write_log(
        self, feature: Feature, attempts_log: list[dict[str, Any]], report: dict[str, Any] | None,
        replay_stats: dict[str, int] | None = None,
    ) -> None:
        log = build_feature_log(
            feature, self.state.feature(feature.id), model=self.config.model, strategy=self.config.context,
            check_command=self.spec.check_command(feature),
            attempts_log=[AttemptRecord.model_validate(record) for record in attempts_log], report=report,
            replay_stats=ReplayStats.model_validate(replay_stats) if replay_stats is not None else None,
        )
        write_feature_log(self.paths, log)

    def _final_verdict(self) -> tuple[int, str]:
        statuses = [self._status(fid) for fid in self.selected]
        if all(status == "passed" for status in statuses):
            return EXIT_OK, "passed"
        return EXIT_FAILED, "failed"

    def _emit_finished(self, result: RunResult) -> None:
        counts = {s: sum(self._status(fid) == s for fid in self.selected) for s in ("passed", "failed", "blocked")}
        pending = len(self.selected) - sum(counts.values())
        totals = self.state.totals
        self.events.emit(
            "run_finished", outcome=result.outcome, exitCode=result.exit_code, passed=counts["passed"],
            failed=counts["failed"], blocked=counts["blocked"], pending=pending, tokens=totals.tokens.total,
            usage=totals.tokens.dump(), costUsd=round(totals.cost_usd, 6), durationMs=result.duration_ms,
            message=result.message or None,
        )


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Hold SIGINT/SIGTERM while the final state is written: a second Ctrl-C must not tear it."""
    signals = {signal.SIGINT, signal.SIGTERM}
    try:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    except (AttributeError, ValueError, OSError):
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _attempt_record(attempt: int, outcome: AttemptOutcome) -> dict[str, Any]:
    """The attempt's `attemptHistory` entry; its verification is added once the check ran."""
    return {
        "attempt": attempt, "stop": outcome.stop, "turns": outcome.turns, "toolCalls": outcome.tool_calls,
        "maskedOutputs": outcome.masked, "error": outcome.error, "verification": None,
    }


def _with_attempt(history: list[dict[str, Any]], record: dict[str, Any]) -> list[dict[str, Any]]:
    """`history` with `record` in it once: a check run again after a kill replaces the
    record the log may already hold for the same attempt (the cut-short entries stay)."""
    kept = [
        entry for entry in history
        if not (isinstance(entry, dict) and entry.get("attempt") == record["attempt"] and entry.get("stop") != "interrupted")
    ]
    return [*kept, record]
