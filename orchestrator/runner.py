"""The run loop: pick feature, build prompt, run agent, verify, record, maybe summarize.

Control flow by exceptions: a limit (`LimitReached`), an unreachable API (`ApiUnavailable`),
refused credentials (`ApiAuthError`) and an interrupt (`KeyboardInterrupt`, which SIGTERM
raises too) are caught in `run()` alone, which saves state and maps them to exit codes.
"""

from __future__ import annotations

import contextlib
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from context_agent import ContextAgent, render_project_context
from orchestrator import git_checkpoint, protect
from orchestrator.atomic import LinkRefused
from orchestrator.config import RunConfig
from orchestrator.events import EventSink
from orchestrator.executor import AgentSession, AttemptOutcome, run_agent
from orchestrator.feature_log import build_feature_log, write_feature_log
from orchestrator.model_client import ApiAuthError, ApiUnavailable, LimitReached, ModelClient, Spend
from orchestrator.paths import ProjectPaths
from orchestrator.prompts import feature_prompt, system_prompt
from orchestrator.scheduler import RunQueue, ordered, reconcile
from orchestrator.secrets import scrubbed_environment
from orchestrator.selection import select
from orchestrator.spec import Feature, LoadedSpec
from orchestrator.state import RunState, StateStore, now_ms
from orchestrator.strategies import StrategyContext, build_strategy_context
from orchestrator.tools import ToolContext
from orchestrator.tools.shell_policy import ShellPolicy
from orchestrator.verify import VerificationResult, run_check
from orchestrator.working_memory import WorkingMemory

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
        self.client = ModelClient(config, sdk, self.spend, on_retry=events.warn)
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
            while (feature := self._next_feature()) is not None:
                self._run_feature(feature)
                self._count_completed(feature)
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
            self.store.record(self.state, candidate.id)
            self._write_log(candidate, self._previous_attempts(candidate.id), None)
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
        entry = self.state.feature(feature.id)
        max_attempts = self._attempts_for(feature)
        interrupted = entry.attempts + 1 if entry.reason == "resumed after an interrupted attempt" else None
        self.spend.feature_tokens, self.spend.feature_cost_usd = entry.tokens, entry.cost_usd
        clock, base_duration = time.monotonic(), entry.duration_ms
        attempts_log = self._previous_attempts(feature.id)
        report: dict[str, Any] | None = None
        replay_stats: dict[str, int] | None = None
        try:
            while entry.attempts < max_attempts and entry.status != "passed":
                attempt = entry.attempts + 1
                entry.status, entry.reason = "in_progress", None
                entry.started_at = entry.started_at or now_ms()
                self.store.record(self.state, feature.id)
                self.events.emit(
                    "feature_started", id=feature.id, name=feature.name, attempt=attempt, maxAttempts=max_attempts,
                    index=self._position(feature), total=len(self.selected),
                )
                # History is read before this attempt adds to the log: it holds what came before.
                strategy = self._strategy_context(feature, interrupted)
                self.memory.append("wm_event", event="status", featureId=feature.id, status="in_progress", attempt=attempt)
                replay_stats = strategy.replay_stats or replay_stats
                interrupted = None
                outcome, verification = self._attempt(feature, attempt, strategy)
                entry.attempts = attempt
                entry.last_verification = verification.to_json()
                report = outcome.report.model_dump() if outcome.report else report
                attempts_log.append(_attempt_record(attempt, outcome, verification))
                if verification.success:
                    entry.status = "passed"
                    self._on_pass(feature, attempt, outcome)
                else:
                    self.context.record_failure(feature.id, attempt, entry.last_verification)
                    self._book_feature(entry, clock, base_duration)
                    self.store.record(self.state, feature.id)
            if entry.status != "passed":
                entry.status = "failed"
                entry.reason = f"check still failing after {entry.attempts} attempt(s)"
                if report:
                    self.context.record_report(feature.id, report)
            entry.completed_at = now_ms()
            self.state.iteration += 1
            entry.iteration = self.state.iteration
        finally:
            self._book_feature(entry, clock, base_duration)
            self.store.record(self.state, feature.id)
            self._write_log(feature, attempts_log, report, replay_stats)
            if entry.status == "passed" and entry.last_verification and entry.last_verification.get("output"):
                # The log keeps the passing check's output; in the state it would only weigh on
                # every snapshot (4,000 characters a feature is 40 MB at 10,000 features).
                entry.last_verification = {**entry.last_verification, "output": ""}
        self.events.emit(
            "feature_finished", id=feature.id, status=entry.status, attempts=entry.attempts,
            durationMs=entry.duration_ms, tokens=entry.tokens.total, usage=entry.tokens.dump(),
            costUsd=round(entry.cost_usd, 6), reason=entry.reason,
        )
        self.memory.append("wm_event", event="status", featureId=feature.id, status=entry.status, attempts=entry.attempts)

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
        guard = protect.take_guard(
            self.paths.root, self.spec.check_command(feature), feature.protected,
            carried=self._unrestored.pop(feature.id, None),
        )
        outcome = run_agent(self._session(guard.files), strategy.history, prompt, feature.id)
        self.memory.append(
            "text_output", featureId=feature.id, attempt=attempt, stop=outcome.stop,
            text=outcome.final_text, report=outcome.report.model_dump() if outcome.report else None,
        )
        changed = protect.guard_changes(guard)
        if changed:
            stuck = protect.restore(guard, changed)
            if stuck:  # the next attempt compares against the originals, not the agent's version
                self._unrestored[feature.id] = guard
            how = f"could not restore {', '.join(stuck)}" if stuck else "restored"
            verification = VerificationResult(
                command=self.spec.check_command(feature), success=False, exit_code=None, attempt=attempt,
                error=f"protected files changed by the agent ({how}; fix the code, not the check): {', '.join(changed)}",
            )
        else:
            verification = self._verify(feature, attempt, outcome)
        self.events.emit("verification", id=feature.id, **verification.to_json())
        self.memory.append("wm_event", event="verification", featureId=feature.id, **verification.to_json())
        return outcome, verification

    def _verify(self, feature: Feature, attempt: int, outcome: AttemptOutcome) -> VerificationResult:
        command = self.spec.check_command(feature)
        result = run_check(
            command, self.paths.root, attempt=attempt, timeout=self.config.check_timeout, env=self.check_env
        )
        if result.skipped:
            # No check at all: the agent's report decides, and the log says it was not verified.
            reported = outcome.report is not None
            result.success = reported
            result.error = None if reported else f"no check command and the agent did not report ({outcome.stop})"
        return result

    def _on_pass(self, feature: Feature, attempt: int, outcome: AttemptOutcome) -> None:
        if outcome.report:
            self.context.record_report(feature.id, outcome.report.model_dump())
        if attempt > 1:
            learned = outcome.report.summary if outcome.report else outcome.final_text
            self.context.record_prevention(feature.id, learned or f"attempt {attempt} passed after the fix")
        self.state.recent_completed = [*self.state.recent_completed, feature.id][-RECENT_KEPT:]
        if self.config.commit and git_checkpoint.is_git_repo(self.paths.root):
            try:
                sha = git_checkpoint.commit_checkpoint(self.paths.root, f"orchestrate: {feature.id}: {feature.name}")
            except git_checkpoint.CheckpointError as err:
                self.events.warn(f"checkpoint commit for {feature.id} failed: {err}")
            else:
                if sha:
                    self.events.emit("checkpoint", id=feature.id, sha=sha)

    # ---- summarization ------------------------------------------------------------------
    def _count_completed(self, feature: Feature) -> None:
        if self._status(feature) not in ("passed", "failed"):
            return
        schedule = self.state.summarization
        schedule.unsummarized.append(feature.id)
        schedule.completed_since_summary += 1
        self.store.record(self.state, feature.id)
        if schedule.completed_since_summary >= self.config.summarize_every:
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
        self._book_totals()
        self.store.record(self.state, ids[-1])
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
        self.store.save(state)
        return state

    def _start_spend(self) -> None:
        totals = self.state.totals
        self.spend.run_cost_usd, self.spend.run_tokens = totals.cost_usd, totals.tokens
        self.spend.summarizer_tokens, self.spend.summarizer_cost_usd = totals.summarizer_tokens, totals.summarizer_cost_usd
        self.spend.calls = totals.api_calls

    def _book_totals(self) -> None:
        totals = self.state.totals
        totals.cost_usd, totals.tokens, totals.api_calls = self.spend.run_cost_usd, self.spend.run_tokens, self.spend.calls
        totals.summarizer_tokens, totals.summarizer_cost_usd = self.spend.summarizer_tokens, self.spend.summarizer_cost_usd

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
        from orchestrator.strategies import _read_log_file  # one reader of feature logs

        log = _read_log_file(self.paths, feature_id) or {}
        history = log.get("attemptHistory")
        return list(history) if isinstance(history, list) else []

    def _write_log(
        self, feature: Feature, attempts_log: list[dict[str, Any]], report: dict[str, Any] | None,
        replay_stats: dict[str, int] | None = None,
    ) -> None:
        log = build_feature_log(
            feature, self.state.feature(feature.id), model=self.config.model, strategy=self.config.context,
            check_command=self.spec.check_command(feature), attempts_log=attempts_log, report=report,
            replay_stats=replay_stats,
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


def _attempt_record(attempt: int, outcome: AttemptOutcome, verification: VerificationResult) -> dict[str, Any]:
    return {
        "attempt": attempt, "stop": outcome.stop, "turns": outcome.turns, "toolCalls": outcome.tool_calls,
        "maskedOutputs": outcome.masked, "error": outcome.error, "verification": verification.to_json(),
    }
