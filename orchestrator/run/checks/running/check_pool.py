"""Passed features' checks, run again, several at once: for the regression guard, final
verification and `orchestrate verify`.

Up to `concurrency` checks run at the same time (`check_concurrency`: the CPU count by default;
1 when checks share a port or a file), each with its own timeout; plain pytest checks run several
to a pytest process (`orchestrator.run.checks.running.check_batch`). In a git project the tree is
recorded before and the files the checks modified or deleted are put back after, so a check
that deletes files loses nothing (and the caller hears which files it touched).
"""

from __future__ import annotations

import collections
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from orchestrator.git.checkpoint import is_git_repo
from orchestrator.git.run_git import CheckpointError
from orchestrator.git.tree import TreeSnapshot
from orchestrator.run.checks.running.check_batch import parallel, run_batched
from orchestrator.run.checks.running.check_command import DEFAULT_TIMEOUT, run_check_recorded
from orchestrator.run.checks.running.pytest_outcomes import PytestRecord
from orchestrator.safety.environment import CommandEnvironment
from orchestrator.store.records import ReCheck
from shared_base.check_result import CheckResult

CheckRunner = Callable[[str, Path], CheckResult]  # (command, workspace) -> its result


def default_concurrency() -> int:
    """The CPUs this process may use."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):
        return os.cpu_count() or 1


@dataclass(frozen=True)
class PoolRunner:
    """The real runner: `run_check` in the run's `environment` moved to the given workspace, with its
    timeout. It can also give what pytest recorded, so that several plain pytest checks share one
    process (`check_batch`)."""

    environment: CommandEnvironment
    timeout: float = DEFAULT_TIMEOUT

    def __call__(self, command: str, workspace: Path) -> CheckResult:
        return self.recorded(command, workspace)[0]

    def recorded(
        self, command: str, workspace: Path, extra: Mapping[str, str] | None = None
    ) -> tuple[CheckResult, PytestRecord]:
        environment = self.environment.at(workspace)
        if extra:
            environment = environment.with_variables({**environment.variables, **extra})
        return run_check_recorded(command, environment, attempt=0, timeout=self.timeout)


def in_checkout(
    runner: CheckRunner, checkout: Path | None, live: Path | None, shared: Sequence[tuple[Path, Path]] = ()
) -> CheckRunner:
    """`runner` for checks in a verification checkout at `checkout` that stands in for the live
    repository at `live`: in the sandbox the checkout is mounted over the live tree, with the
    `shared` directories read-only in it (`CommandEnvironment.standing_in`). A runner that is not
    the real one (a test's) is kept."""
    if checkout is None or live is None or not isinstance(runner, PoolRunner):
        return runner
    return PoolRunner(runner.environment.standing_in(checkout, live, tuple(shared)), runner.timeout)


def check_runner(environment: CommandEnvironment, timeout: float = DEFAULT_TIMEOUT) -> CheckRunner:
    """The real runner: `run_check` in the run's `environment` moved to the given workspace, with its timeout."""
    return PoolRunner(environment, timeout)


@dataclass(frozen=True)
class CheckRun:
    """One feature's check, run again."""

    feature_id: str
    result: CheckResult
    duration_ms: int

    @property
    def success(self) -> bool:
        return self.result.success

    def record(self) -> ReCheck:
        return ReCheck.of(self.feature_id, self.result, self.duration_ms)


Progress = Callable[[int, int], None]  # (checks done, checks in all): for the live view


def run_checks(
    checks: Sequence[tuple[str, str]], workspace: Path, runner: CheckRunner, concurrency: int,
    on_warning: Callable[[str], None] = lambda _m: None, *, put_back: bool = True, on_progress: Progress | None = None,
) -> list[CheckRun]:
    """Run each `(feature id, command)` in `workspace`, up to `concurrency` at once; results in the
    given order. `put_back=False`: a scratch tree, whatever the checks change there is thrown away.
    `on_progress` hears how many are done, from 0 up, as they finish (from the checks' threads)."""
    if not checks:
        return []
    snapshot = _snapshot(workspace, on_warning) if put_back else None
    try:
        runs = _run_all(checks, workspace, runner, concurrency, _Counter(checks, on_progress))
    finally:
        if snapshot is not None:
            _put_back(snapshot, [feature_id for feature_id, _ in checks], on_warning)
    return runs


class _Counter:
    """Counts the checks done for `on_progress`; a command several features share counts for each."""

    def __init__(self, checks: Sequence[tuple[str, str]], on_progress: Progress | None) -> None:
        self.sharing = collections.Counter(command for _, command in checks)
        self.total, self.done, self.on_progress = len(checks), 0, on_progress
        self.lock = threading.Lock()
        if on_progress is not None:
            on_progress(0, self.total)

    def add(self, command: str) -> None:
        if self.on_progress is None:
            return
        with self.lock:
            self.done += self.sharing[command]
            self.on_progress(self.done, self.total)


def _run_all(
    checks: Sequence[tuple[str, str]], workspace: Path, runner: CheckRunner, concurrency: int, counter: _Counter
) -> list[CheckRun]:
    """Each distinct command once (features sharing the spec's one `verify` share its run); plain
    pytest checks several to a process where the runner can read pytest's record (`check_batch`)."""

    def one(command: str) -> tuple[CheckResult, int]:
        started = time.monotonic()
        result = runner(command, workspace)
        counter.add(command)
        return result, int((time.monotonic() - started) * 1000)

    commands = list(dict.fromkeys(command for _, command in checks))
    if isinstance(runner, PoolRunner):
        done = run_batched(commands, workspace, runner.recorded, concurrency, on_done=counter.add,
                           seen_at=runner.environment.at(workspace).seen_workspace)
    else:
        done = dict(zip(commands, parallel(one, commands, concurrency), strict=True))
    return [CheckRun(feature_id, *done[command]) for feature_id, command in checks]


def _snapshot(workspace: Path, on_warning: Callable[[str], None]) -> TreeSnapshot | None:
    if not is_git_repo(workspace):
        return None
    try:
        return TreeSnapshot(workspace)
    except CheckpointError as err:
        on_warning(f"could not record the tree before re-running checks ({err}); files they change stay changed")
        return None


def _put_back(snapshot: TreeSnapshot, feature_ids: list[str], on_warning: Callable[[str], None]) -> None:
    with snapshot:
        try:
            touched = snapshot.changed()
            snapshot.restore(touched)
        except CheckpointError as err:
            on_warning(f"could not check what the re-run checks changed: {err}")
            return
    if touched:
        shown = ", ".join(touched[:10]) + (f" and {len(touched) - 10} more" if len(touched) > 10 else "")
        on_warning(
            f"re-running the checks of {', '.join(feature_ids[:10])} modified or deleted {shown}; put back as they "
            "were (a check should leave the project's files alone)"
        )
