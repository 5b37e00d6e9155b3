"""Final verification of the combined tree: every passed feature's check, run again.

The checks run at most `jobs` at a time, in the run's sandbox, through the run's re-check pool
(`orchestrator.run.checks.running.check_pool`, which the regression guard and a run's final verification use
too). A feature whose check fails is `regressed` (state and log, its failure kept for the run
that rebuilds it), and one `final_verification` event is emitted, shaped as a run's
(`orchestrator.run.checks.final_verification`, which this does not import: it brings in the model client).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from orchestrator.git.carried_files import RunTimes, carry_ignored
from orchestrator.git.run_git import run_git
from orchestrator.run.base.feature_logs import FeatureLogs
from orchestrator.run.checks.clean_checkout import CLEAN_CHECKOUT, drop_bytecode
from orchestrator.run.checks.running.check_pool import CheckRunner, check_runner, in_checkout, run_checks
from orchestrator.safety.environment import CommandEnvironment
from orchestrator.spec.feature_spec import FeatureSpec
from orchestrator.store.check_excerpt import failure_reason
from orchestrator.store.event_kinds import FinalVerification
from orchestrator.store.events import EventSink
from orchestrator.store.records import CheckFailure
from orchestrator.store.run_state import RunState
from shared_base.check_result import CheckResult


def default_jobs() -> int:
    """Checks at once: the cores, at most 4 (checks often start test runners of their own)."""
    return max(1, min(4, os.cpu_count() or 1))


@dataclass(frozen=True)
class CheckSettings:
    """How checks run: the environment (the sandbox, no secrets) and the timeout of the run's config."""

    environment: CommandEnvironment
    timeout: float
    jobs: int = 1

    def runner(self) -> CheckRunner:
        """The check pool's runner with these settings (every check of a combine goes through it)."""
        return check_runner(self.environment, self.timeout)


def verify_combined(
    workspace: Path, spec: FeatureSpec, state: RunState, settings: CheckSettings, events: EventSink, logs: FeatureLogs,
    *, live: Path, run_times: Path,
) -> dict[str, CheckResult]:
    """Re-run every passed feature's check in `workspace`, mark the failing ones `regressed`,
    emit `final_verification`; the failed results by feature id. In the sandbox the integration
    worktree is mounted where the live repository of `live` (the project) is: the checks see the
    combined tree, never the live one. As in a run's final verification, it carries the project's
    ignored files no run made or changed (`run_times`; `orchestrator.git.carried_files`)."""
    started = time.monotonic()
    checks = [(f.id, command) for f in spec.features
              if state.feature(f.id).status == "passed" and (command := spec.check_command(f))]
    # `workspace` is the integration worktree, reset and cleaned at the tip: a clean checkout, once
    # committed bytecode is gone. It is reset and cleaned before every use (`git clean -x` removes
    # what was carried in), so nothing is put back.
    drop_bytecode(workspace)
    carried = carry_ignored(live, workspace, RunTimes.load(run_times), share_dirs=settings.environment.sandbox.active)
    runner = in_checkout(settings.runner(), work_tree_top(workspace), work_tree_top(live), carried.shared)
    runs = run_checks(checks, workspace, runner, settings.jobs, events.warn, put_back=False)
    failed = {run.feature_id: run.result for run in runs if not run.success}
    for fid, result in failed.items():
        entry = state.feature(fid)
        entry.status = "regressed"  # passed in its shard; the next run rebuilds it with this failure fed back
        entry.reason = (f"final verification: its check fails on the combined tree "
                        f"({failure_reason(result.output, result.error, result.exit_code)})"
                        + (f"; {carried.describe()}" if carried.left_out else ""))
        entry.last_verification = result
        log = logs.read(fid)
        if log is not None:
            logs.write(log.with_verdict(entry))
    events.emit(FinalVerification(
        checked=len(runs), passed=len(runs) - len(failed), failed=list(failed),
        duration_ms=int((time.monotonic() - started) * 1000), tree=CLEAN_CHECKOUT,
        failures=[CheckFailure.of(fid, result) for fid, result in failed.items()],
    ))
    return failed


def work_tree_top(directory: Path) -> Path | None:
    """The top level of the git work tree `directory` lies in; None when git cannot say."""
    result = run_git(directory, "rev-parse", "--show-toplevel")
    return Path(result.stdout.strip()) if result.returncode == 0 and result.stdout.strip() else None
