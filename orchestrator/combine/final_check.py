"""Final verification: every passed feature's check, run again on the combined tree.

The checks run in one directory, at most `jobs` at a time, through the run's re-check pool
(`orchestrator.run.check_pool`, which the regression guard and the run's final verification use
too). `run_checks` is also what the integration tree re-checks a merge with.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from orchestrator.run.check_pool import check_runner
from orchestrator.run.check_pool import run_checks as pool_run_checks
from orchestrator.run.verify import VerificationResult


def default_jobs() -> int:
    """Checks at once: the cores, at most 4 (checks often start test runners of their own)."""
    return max(1, min(4, os.cpu_count() or 1))


@dataclass(frozen=True)
class CheckSettings:
    """How checks run: the environment (no secrets) and the timeout of the run's config."""

    env: Mapping[str, str]
    timeout: float
    jobs: int = 1


def run_checks(
    workspace: Path, checks: Sequence[tuple[str, str | None]], settings: CheckSettings
) -> dict[str, VerificationResult]:
    """Run each `(feature id, check command)` in `workspace`; their results by feature id.

    A feature without a command has nothing to re-check: it is not run and not in the result.
    The run's own re-check pool does the work (`orchestrator.run.check_pool`): a command several
    features share runs once, and files a check changes are put back.
    """
    wanted = [(fid, command) for fid, command in checks if command]
    runner = check_runner(settings.timeout, dict(settings.env))
    return {run.feature_id: run.result for run in pool_run_checks(wanted, workspace, runner, settings.jobs)}


def final_verification(
    workspace: Path, checks: Sequence[tuple[str, str | None]], settings: CheckSettings
) -> dict[str, VerificationResult]:
    """The checks of every passed feature on the final combined tree; the failed ones by id."""
    results = run_checks(workspace, checks, settings)
    return {fid: result for fid, result in results.items() if not result.success}
