"""Final verification: every passed feature's check, run again on the combined tree.

A minimal version of the run's final verification (issue 15 builds the full one): the checks
run in one directory, at most `jobs` at a time, each as the run runs it (`verify.run_check`:
its own process group, a timeout, a bounded output tail). `run_checks` is also what the
integration tree re-checks a merge with.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from orchestrator.run.verify import CheckVerifier, VerificationResult


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
    """
    verifier = CheckVerifier(workspace, timeout=settings.timeout, env=dict(settings.env))
    wanted = [(fid, command) for fid, command in checks if command]
    if not wanted:
        return {}
    with ThreadPoolExecutor(max_workers=max(1, settings.jobs)) as pool:
        futures = {fid: pool.submit(verifier.check, command, 1) for fid, command in wanted}
        return {fid: future.result() for fid, future in futures.items()}


def final_verification(
    workspace: Path, checks: Sequence[tuple[str, str | None]], settings: CheckSettings
) -> dict[str, VerificationResult]:
    """The checks of every passed feature on the final combined tree; the failed ones by id."""
    results = run_checks(workspace, checks, settings)
    return {fid: result for fid, result in results.items() if not result.success}
