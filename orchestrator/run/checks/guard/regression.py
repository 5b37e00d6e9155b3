"""The regression guard: after a feature's own check passes and before its checkpoint, the
checks of the passed features it may have broken run again; one failing fails the attempt.

`--regression affected` (the default) picks the passed features whose footprint meets the
files this attempt changed, plus the feature's transitive dependencies, and runs the most
likely to break that fit `regression_budget` (the rest are deferred to final verification);
`all` runs every passed feature's check; `none` turns the guard off. The guard takes the workspace and the state it
judges by, so a parallel worker can run it in its own worktree after a merge.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from orchestrator.config import RunConfig
from orchestrator.regression_budget import RegressionBudget, parse_budget
from orchestrator.run.checks.guard.footprint_index import FootprintIndex
from orchestrator.run.checks.guard.guard_plan import Candidate, GuardPlan, estimator, plan_checks
from orchestrator.run.checks.running.check_pool import CheckRun, CheckRunner, Progress, run_checks
from orchestrator.spec.feature_spec import Feature, FeatureSpec
from orchestrator.store.agent_words import BROKE, FIX_YOUR_CHANGE, OWN_CHECK_PASSED, YOU_CHANGED
from orchestrator.store.records import Footprint
from orchestrator.store.run_state import RunState
from shared_base.check_result import CheckResult

RegressionMode = Literal["affected", "all", "none"]


def dependencies_of(spec: FeatureSpec, feature: Feature) -> set[str]:
    """`feature`'s dependencies, their dependencies, and so on."""
    found: set[str] = set()
    todo = list(feature.depends_on)
    while todo:
        dep = todo.pop()
        if dep in found:
            continue
        try:
            other = spec.feature(dep)  # the spec's index: no list of every id per call
        except KeyError:
            continue
        found.add(dep)
        todo += other.depends_on
    return found


@dataclass(frozen=True)
class GuardRound:
    """One round of the guard after a feature: its plan and the checks it ran."""

    plan: GuardPlan
    runs: list[CheckRun]
    duration_ms: int

    @property
    def deferred(self) -> int:
        """Affected checks left to final verification."""
        return len(self.plan.deferred)


def _shared(footprint: Footprint | None, touched: set[str]) -> int:
    """How many of the changed files a passed feature's footprint holds (0 without a footprint)."""
    if footprint is None or (touched.isdisjoint(footprint.changed) and touched.isdisjoint(footprint.check)):
        return 0
    return len(footprint.files() & touched)


class RegressionGuard:
    """Picks and re-runs the checks a feature's change may have broken.

    `budget`: what the checks may cost after one feature (`orchestrator.run.checks.guard.guard_plan`); None
    runs every affected check (`--regression all`, or no final verification to leave the rest to).
    """

    def __init__(
        self, spec: FeatureSpec, state: RunState, *, mode: RegressionMode, concurrency: int, runner: CheckRunner,
        on_warning: Callable[[str], None] = lambda _m: None, budget: RegressionBudget | None = None,
    ) -> None:
        self.spec, self.state, self.mode = spec, state, mode
        self.concurrency, self.runner, self.on_warning = concurrency, runner, on_warning
        self.budget = budget if mode == "affected" else None
        self.positions = {feature.id: index for index, feature in enumerate(spec.features)}
        self.index = FootprintIndex(state)
        # What ranks the checks: measured times (s), checks seen failing, the round each last ran.
        self.durations: dict[str, float] = {}
        self.broke: set[str] = set()
        self.last_run: dict[str, int] = {}
        self.rounds = 0
        self._lock = threading.Lock()  # parallel runs plan and record from several threads

    def targets(self, feature: Feature, changed: Iterable[str] | None) -> list[str]:
        """The passed features (with a check) whose checks re-run after `feature`, in spec order.

        `changed` None means not known yet (before the attempt): only the footprints that the
        assessment predicts are left out, dependencies are always in."""
        return [candidate.feature_id for candidate in self._candidates(feature, changed)]

    def _candidates(self, feature: Feature, changed: Iterable[str] | None) -> list[Candidate]:
        if self.mode == "none":
            return []
        self.index.watch(feature.id)
        touched = set(changed or ())
        deps = dependencies_of(self.spec, feature)
        # `all`: every feature of the spec; `affected`: those the index says may meet the change
        # (checked against the state below) and the dependencies, whatever the run's length.
        # (Not the state's keys: another worker's thread may add an entry while this one iterates.)
        ids = self.positions.keys() if self.mode == "all" else self.index.meeting(touched) | deps
        picked = []
        for fid in ids:
            entry = self.state.features.get(fid)
            position = self.positions.get(fid)  # None: no longer in the spec, no check to re-run
            if entry is None or entry.status != "passed" or fid == feature.id or position is None:
                continue
            shared = _shared(entry.footprint, touched)
            if not (self.mode == "all" or shared or fid in deps):
                continue
            command = self.spec.check_command(self.spec.feature(fid))
            if command:
                picked.append(Candidate(
                    fid, command, shared, fid in self.broke or entry.attempts > 1, fid in deps,
                    self.last_run.get(fid, 0), position,
                ))
        picked.sort(key=lambda candidate: candidate.position)  # spec order
        return picked

    def own_check_took(self, feature_id: str, seconds: float) -> None:
        """The feature's own check time: its budget's base, and its estimate as a re-run check."""
        with self._lock:
            self.durations[feature_id] = seconds

    def plan(self, feature: Feature, changed: Iterable[str]) -> GuardPlan:
        """The affected checks ranked, and which of them fit the budget (`orchestrator.run.checks.guard.guard_plan`)."""
        candidates = self._candidates(feature, changed)
        with self._lock:
            own = self.durations.get(feature.id, 0.0)
            budget = self.budget.for_check(own) if self.budget is not None else None
            return plan_checks(candidates, budget_seconds=budget, estimate=estimator(dict(self.durations), own),
                               workers=self.concurrency)

    def ran(self, runs: Iterable[CheckRun]) -> None:
        """Note what the re-run checks took and which failed, for the next rounds' plans."""
        with self._lock:
            self.rounds += 1
            for run in runs:
                self.durations[run.feature_id] = run.duration_ms / 1000
                self.last_run[run.feature_id] = self.rounds
                if not run.success:
                    self.broke.add(run.feature_id)

    def check(
        self, workspace: Path, feature: Feature, changed: Iterable[str], *, runner: CheckRunner,
        put_back: bool = True, on_progress: Progress | None = None,
    ) -> GuardRound:
        """Re-run the planned checks in `workspace` (ranked order) with `runner` (the guard's own in
        the live workspace; in an integration tree, one standing in for the live repository:
        `check_pool.in_checkout`); the rest are deferred.
        `put_back=False`: a scratch tree (`run_checks`); `on_progress`: checks done of all, as they end."""
        started = time.monotonic()
        plan = self.plan(feature, changed)
        checks = [(fid, self.spec.check_command(self.spec.feature(fid)) or "") for fid in plan.picked]
        runs = run_checks(checks, workspace, runner, self.concurrency, self.on_warning, put_back=put_back,
                          on_progress=on_progress)
        self.ran(runs)
        return GuardRound(plan, runs, int((time.monotonic() - started) * 1000))


def guard_budget(config: RunConfig) -> RegressionBudget | None:
    """The run's budget for the guard; None (every affected check runs) when no final
    verification would run the checks the budget defers."""
    return parse_budget(config.regression_budget) if config.final_verify else None


def failures(runs: Iterable[CheckRun]) -> list[CheckRun]:
    return [run for run in runs if not run.success]


def broken_result(broken: list[CheckRun], attempt: int, *, shared: Sequence[str] = (), deferred: int = 0) -> CheckResult:
    """The attempt's result when it broke passed features: the first one's check, command and output.
    `shared`: the files the attempt changed that the broken feature's footprint holds; `deferred`: the
    announced checks the guard's budget left to final verification."""
    first = broken[0].result
    why = first.error or (f"exit code {first.exit_code}" if first.exit_code is not None else "it failed")
    others = [run.feature_id for run in broken[1:]]
    also = f" (also broke: {', '.join(others)})" if others else ""
    files = f"{YOU_CHANGED}{', '.join(shared[:10])}, which feature {broken[0].feature_id} uses" if shared else ""
    later = f"; {deferred} other announced check(s) were deferred to final verification" if deferred else ""
    return CheckResult(
        command=first.command, success=False, exit_code=first.exit_code, output=first.output, attempt=attempt,
        error=f"{OWN_CHECK_PASSED}{BROKE}{broken[0].feature_id}: its check failed ({why}){also}{files}{later}"
              f"{FIX_YOUR_CHANGE}",  # the agent's words: the user reads them through `for_the_user`
    )
