"""`orchestrate run --jobs N`: up to N features at work at once, each in its own git worktree,
merged onto the user's branch one at a time through a checked queue (a feature waiting there
has given its slot to the next one: `worker_slots`).

`ParallelSchedule` is the `Runner`'s schedule (`runner.Schedule`) for it: a feature is ready once every
dependency is merged (a passed feature is a merged one here: `ready_features`); ready features start by priority,
then spec order, in worker threads (the work is waiting on the model and on checks, not on
Python). Each worker runs a `FeatureJob` in `.autonomous/worktrees/<id>` whose landing is a
`QueueLanding` (`queue_landing`): its pass goes through the `MergeQueue`. All workers share one
Context Agent, one state store, one working memory and the run's `SpendPool` (`RunParts.pool`: the
caps hold for all of them together, and its stop token stops their clients and verifiers).

Three steps are pluggable (`ParallelHooks`): the re-check after a merge (default: the feature's
own check on the merged tree, then the regression guard's checks), which features are likely to
touch the same files (default: the Impact Agent predicts both change a file: `checks/impact`), and what happens to a failed
feature's worktree (default: deleted, once its job has parked the work on `orchestrate/failed/<id>`).

Stopping: Ctrl-C, a limit or an error stops every worker at its next model call, check or queue
turn; after a short grace, calls in flight are booked at their worst case and the state is saved
without them. Worktrees are removed at the end, and a killed run's are pruned by the next.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from orchestrator.git.run_git import CheckpointError
from orchestrator.git.worktrees import Worktrees
from orchestrator.llm.client import ModelClient
from orchestrator.llm.costs.spend import Spend
from orchestrator.merge.landing import SquashOntoHead
from orchestrator.merge.queue import MergeQueue
from orchestrator.run.attempt.feature_job import FeatureJob
from orchestrator.run.attempt.recorder import FeatureRecorder, LogHeading
from orchestrator.run.base.books import RunBooks
from orchestrator.run.checks.clean_checkout import PrivateDirectory
from orchestrator.run.checks.impact_agent.impact import shared_writes
from orchestrator.run.checks.running.check_command import CheckVerifier
from orchestrator.run.checks.running.check_pool import CheckRunner, in_checkout
from orchestrator.run.finishing import PassFinisher
from orchestrator.run.parallel.background_summary import BackgroundSummary, worth_summarizing
from orchestrator.run.parallel.integrity_steps import (
    ParallelHooks,
    batch_recheck,
    guarded_recheck,
    worker_integrity,
)
from orchestrator.run.parallel.queue_landing import Lane, QueueLanding, take_up_merge
from orchestrator.run.parallel.ready_features import ReadyFeatures
from orchestrator.run.parallel.worker_slots import WorkerSlots
from orchestrator.run.runner import Runner
from orchestrator.safety.processes.descendants import commands_run_concurrently
from orchestrator.spec.feature_spec import Feature
from orchestrator.store.event_kinds import FeatureWaiting
from orchestrator.store.run_state import RunState
from shared_base.check_result import CheckResult

GRACE_SECONDS = 3.0  # how long a stop waits for workers before it gives up on them


class ParallelSchedule:
    """Works the selected features of a run, up to `config.jobs` at once (the run's `Schedule`)."""

    def __init__(self, run: Runner, hooks: ParallelHooks | None = None) -> None:
        if run.parts.pool is None:
            raise ValueError("--jobs N needs the run's parts built with a spend pool (`factory.build_parts`)")
        self.run, self.pool = run, run.parts.pool  # the summarizer's calls are in the pool too
        self.config, self.events, self.parts, self.spec = run.config, run.events, run.parts, run.spec
        self.workspace = run.workspace
        self.hooks = hooks or ParallelHooks(likely_conflict=self._likely_conflict)
        # The merge queue's integration worktree lives outside the project, as combine's does (under
        # `.autonomous/`, a re-check run without a sandbox reached the live tree by `../../`), and in the
        # sandbox it stands in for the live repository (`_in_integration`). Its private directory is
        # named here, made by `_prepare` and removed by `_clean_up`; one a kill left, the next run removes.
        self._private = PrivateDirectory.of(self.workspace, "integration")
        self.worktrees = Worktrees(self.workspace, run.paths.autonomous, integration=self._private.path / "tree")
        self.queue = MergeQueue(
            self.worktrees, self.hooks.recheck or self._own_check, lambda: self.pool.stopping,
            landing=SquashOntoHead(self.events.warn),
            recheck_batch=None if self.hooks.recheck else self._batch_check,  # a plugged-in re-check goes one by one
        )
        self.running: dict[str, threading.Thread] = {}  # a worker per feature, at work or merging
        self.done: queue.Queue[tuple[str, BaseException | None] | None] = queue.Queue()
        self.next = ReadyFeatures(
            run.run_order, set(run.selected), lambda: run.state, self.running, run.attempts_for,
            likely_conflict=lambda a, b: self.hooks.likely_conflict(a, b), settle=run.settle, waits=self._waits,
        )
        self.waited: set[tuple[str, str]] = set()  # (feature, the busy one it waited for), said once
        self.slots = WorkerSlots(self.config.jobs, on_free=lambda: self.done.put(None), awaited=self.next.awaited)
        self.lane = Lane(self.worktrees, self.queue, self.events, self.slots)
        self.summary = BackgroundSummary(run.summarize)
        commands_run_concurrently()  # a worker's leftovers are found by their marker, not by session

    @property
    def state(self) -> RunState:
        return self.run.state

    # ---- the loop -----------------------------------------------------------------------
    def features(self) -> None:
        try:
            self._prepare()
            self._loop()
        except BaseException:
            self._stop_workers()
            raise
        finally:
            self._clean_up()

    def _loop(self) -> None:
        while True:
            self._fill_slots()
            if not self.running:
                return
            try:
                ended = self.done.get(timeout=0.2)
            except queue.Empty:
                self._maybe_summarize()  # one that was due while the last one still ran
                continue
            if ended is not None:  # None: a slot came free (merge queue), or a feature passed (its dependents)
                feature_id, error = ended
                self.running.pop(feature_id).join()
                self.slots.ended(feature_id)
                if error is not None:
                    raise error
            self._fill_slots()
            self._maybe_summarize()

    def _fill_slots(self) -> None:
        while self.slots.free() > 0 and (feature := self.next.pick()) is not None:
            self._start(feature)

    def final_verification(self, verify: Callable[[], list[str]]) -> list[str]:
        """The end summary starts first and runs beside it (`background_summary`)."""
        self.summary.start_after("end")
        try:
            return verify()
        except BaseException:
            self._stop_workers()  # the summary too
            raise

    def before_end_summary(self) -> None:
        """The run's end summary is the one started beside the final verification: wait for it
        (it folded every feature, so nothing is left to summarize after it)."""
        self.summary.wait()

    def _maybe_summarize(self) -> None:
        """Every `summarize_every` completed features, in the background (`background_summary`).
        Not once no feature is left to start: no prompt would read it before the end summary,
        which folds the same features (one call fewer, and the run's end does not wait for two)."""
        due = self.state.summarization.completed_since_summary >= self.config.summarize_every
        if due and worth_summarizing(self.state, self.run.run_order, self.slots.at_work(), self.config.jobs):
            self.summary.start(f"every-{self.config.summarize_every}")

    # ---- workers ------------------------------------------------------------------------
    def _start(self, feature: Feature) -> None:
        thread = threading.Thread(target=self._work_on, args=(feature,), name=f"orchestrate:{feature.id}", daemon=True)
        self.running[feature.id] = thread
        self.slots.started(feature.id)
        thread.start()

    def _work_on(self, feature: Feature) -> None:
        """A worker thread: the feature in a fresh worktree, to its end; then its worktree goes."""
        error: BaseException | None = None
        try:
            self.worktrees.create(feature.id)
            self._job(feature).run()
            if self.state.feature(feature.id).status == "failed":
                self.hooks.park_failed(feature, self.worktrees)
            else:
                self.worktrees.remove(feature.id)
        except BaseException as err:  # handed to the run's thread, which stops the others
            error = err
        self.done.put((feature.id, error))

    def _job(self, feature: Feature) -> FeatureJob:
        """A worker's job: its own client and spend on the shared pool, its worktree and verifier
        (both stop with the run: the pool's token), its pass landing through the merge queue."""
        spend = Spend(run=self.parts.spend.run)  # the feature's own, the run's counter shared
        client = ModelClient(self.parts.client.settings, self.parts.client.sdk, spend, on_retry=self.events.warn,
                             journal=self.parts.store.record_spend, pool=self.pool, on_output=self.events.output_arriving)
        books = RunBooks(self.parts.store, spend, state=self.state)
        workspace = self.worktrees.workspace(feature.id)
        heading = LogHeading(self.config.model, self.config.context, self.spec.check_command(feature))
        recorder = FeatureRecorder(feature, books, self.parts.logs, self.events, self.parts.memory, heading)
        finisher = PassFinisher(books, self.parts.context, self.workspace, self.config.commit, self.events)
        environment = self.parts.environment.at(workspace)
        verifier = CheckVerifier(environment, timeout=self.config.check_timeout, stop=self.pool.token)
        return FeatureJob(
            feature, workspace=workspace, client=client, context=self.parts.context, verifier=verifier,
            recorder=recorder, settings=self.run.job_settings(feature, environment), finish_pass=finisher.finish,
            integrity=worker_integrity(self.run.guarding()), landing=QueueLanding(self.lane),
        )

    def _own_check(self, tree: Path, feature: Feature, attempt: int) -> CheckResult | None:
        """The default re-check: the feature's own check on the merged tree, then the regression guard's."""
        environment = self.parts.environment.standing_in(self.worktrees.integration, self.worktrees.top)
        result = CheckVerifier(environment.at(tree), timeout=self.config.check_timeout).check(
            self.spec.check_command(feature), attempt
        )
        own = None if result.success or result.skipped else result
        return guarded_recheck(self.run.guarding(), self._in_integration(), own, tree, feature, attempt)

    def _batch_check(self, tree: Path, members: Sequence[tuple[Feature, int]], changed: list[str]) -> bool:
        """The default re-check of a merge batch: every member's own check and the guard's, at once."""
        return batch_recheck(self.run.guarding(), self._in_integration(), self.run.concurrency, tree, members, changed)

    def _in_integration(self) -> CheckRunner:
        """The run's check runner for the integration tree: in the sandbox the tree is mounted over
        the live repository (as combine's and final verification's checkouts are), so no re-check
        sees the live project, by a relative path or by its absolute one. Its ignored files are
        the carried ones (`Worktrees.reset_integration`)."""
        return in_checkout(self.run.check_runner, self.worktrees.integration, self.worktrees.top)

    def _likely_conflict(self, a: Feature, b: Feature) -> bool:
        """The two are predicted to change a file in common (`checks/impact`)."""
        return bool(shared_writes(self.state, a.id, b.id))

    def _waits(self, feature: Feature, holder: Feature) -> None:
        """Say once that `feature` waits for `holder`'s files (the live view prints it)."""
        if (feature.id, holder.id) not in self.waited:
            self.waited.add((feature.id, holder.id))
            files = sorted(shared_writes(self.state, feature.id, holder.id))
            self.events.emit(FeatureWaiting(id=feature.id, waits_for=holder.id, files=files))

    # ---- start and end ------------------------------------------------------------------
    def _prepare(self) -> None:
        """Prune what a killed run left, and take up what it merged but did not record."""
        self._private.make()  # one a kill left goes first (and git's record of its tree: `prune_all`)
        Worktrees(self.workspace, self.run.paths.autonomous).remove_integration()  # an earlier version's, in the project
        self.worktrees.prune_all()
        for feature_id, entry in self.state.features.items():
            if entry.status != "passed":
                entry.awaiting_check = None  # its work went with its worktree: the attempt is redone
                if take_up_merge(self.state, feature_id, self.workspace):
                    self.run.books.record(feature_id)
        self.run.finisher.finish_interrupted(self.parts.logs)

    def _stop_workers(self) -> None:
        """Stop every busy worker; give up on those still busy after the grace period."""
        if not self.running and not self.summary.busy:
            return
        self.pool.stop()
        deadline = time.monotonic() + GRACE_SECONDS
        for thread in self.running.values():
            thread.join(max(0.0, deadline - time.monotonic()))
        summary_done = self.summary.wait_when_stopping(deadline)
        if any(thread.is_alive() for thread in self.running.values()) or not summary_done:
            self.pool.abandon_in_flight()
            self.parts.store.freeze()
        self.running.clear()

    def _clean_up(self) -> None:
        try:
            self.worktrees.prune_all()
        except CheckpointError as err:
            self.events.warn(f"could not remove the run's worktrees: {err}; the next run prunes them")
        finally:
            self._private.remove()
