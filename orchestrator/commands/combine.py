"""`orchestrate export DIR` and `orchestrate combine SPEC ARTIFACT...`: CI shards that add up.

A shard job runs `orchestrate run SPEC --shard I/N` (checkpoints on `orchestrate/shard-I-of-N`)
and `orchestrate export DIR`; the final job downloads every DIR and runs `orchestrate combine`,
which lands each feature's checkpoint onto the combined branch through the parallel workers'
merge queue (re-checked), unions the states, logs and Context Agent stores, and ends with final
verification (`orchestrator.combine`), skipped when `final_verify` is off (`--no-final-verify`), as
in a run. Every check runs in the sandbox a run would use (`--sandbox`, orchestrate.toml,
`ORCHESTRATE_SANDBOX`). Its `merge`, `regression_check` and `final_verification`
events go to the project's `.autonomous/events.jsonl`, printed as a CI run prints them.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path

from orchestrator.combine.artifact import Artifact, check_artifact_set, export_artifact
from orchestrator.combine.final_check import CheckSettings, default_jobs
from orchestrator.combine.integration import CombinedBranch
from orchestrator.combine.step import CombineOutcome, Combiner
from orchestrator.commands.rendering.output import PlainRenderer
from orchestrator.config import RunConfig
from orchestrator.git.branch_worktree import current_branch, recorded_branch
from orchestrator.git.checkpoint import exclude_run_state, is_git_repo
from orchestrator.git.run_git import CheckpointError
from orchestrator.run.checks.protection.outside_reads import spec_checks
from orchestrator.run.config_sandbox import sandbox_for
from orchestrator.run.verdict import Outcome, RunResult
from orchestrator.safety.environment import CommandEnvironment
from orchestrator.safety.sandbox_setting import check_variables
from orchestrator.spec.load import LoadedSpec
from orchestrator.store.disk.lock import LockHeld, RunLock
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.events import EventSink
from orchestrator.user_errors import EXIT_OK, UsageError


def export_command(paths: ProjectPaths, directory: Path, config: RunConfig) -> int:
    """Write this project's artifact into `directory`: its branch as a bundle, its records."""
    branch = config.branch or recorded_branch(paths) or (current_branch(paths.root) if is_git_repo(paths.root) else None)
    manifest = export_artifact(paths, directory, branch)
    passed = sum(status == "passed" for status in manifest.statuses.values())
    where = f"branch {manifest.branch} at {manifest.head[:12]}" if manifest.branch and manifest.head else "no branch"
    sys.stdout.write(f"exported to {directory}: {where}; {passed}/{len(manifest.statuses)} feature(s) passed\n")
    return EXIT_OK


def combine_command(
    loaded: LoadedSpec, paths: ProjectPaths, config: RunConfig, artifact_dirs: Sequence[Path], *,
    partial: bool, report: Path | None, junit: Path | None,
) -> int:
    """Combine the artifacts into the project's combined branch; 0 only when everything passed."""
    started = time.monotonic()
    if not is_git_repo(paths.root):
        raise UsageError(f"combine: {paths.root} is not a git repository (run it in a clone of the project)")
    sandbox = sandbox_for(config, paths.root, loaded.path, spec_checks(loaded.spec))  # SandboxUnavailable is a UsageError: exit 2, nothing done
    artifacts = [Artifact(directory) for directory in artifact_dirs]
    check_artifact_set(artifacts, loaded.sha256, str(loaded.path))
    branch = config.branch or current_branch(paths.root)
    if branch is None:
        raise UsageError("combine: HEAD is detached; say which branch to combine onto with --branch NAME")
    variables = check_variables(loaded.path, config.security.secret_env_patterns)
    settings = CheckSettings(environment=CommandEnvironment(paths.root, sandbox, variables),
                             timeout=config.check_timeout, jobs=default_jobs())
    try:
        with RunLock(paths.lock_file):
            exclude_run_state(paths.root)
            events = EventSink(PlainRenderer(tagged=True), paths.events_log)
            if sandbox.warning:
                events.warn(sandbox.warning)
            combiner = Combiner(paths, loaded, CombinedBranch.open(paths, branch), events, settings, config.regression,
                                _say, final_verify=config.final_verify)
            outcome = combiner.run(artifacts)
    except LockHeld as err:
        raise UsageError(str(err)) from err
    except CheckpointError as err:
        raise UsageError(f"combine: git failed: {err}") from err
    verdict = _verdict(outcome, loaded, artifacts, partial)
    _finish(outcome, loaded, config, verdict, branch, report, junit, int((time.monotonic() - started) * 1000))
    return verdict.exit_code


def _verdict(outcome: CombineOutcome, loaded: LoadedSpec, artifacts: Sequence[Artifact], partial: bool) -> Outcome:
    if outcome.problems:
        return Outcome.FAILED
    wanted = _selected(loaded, artifacts, partial)
    return Outcome.PASSED if all(outcome.state.feature(fid).status == "passed" for fid in wanted) else Outcome.FAILED


def _selected(loaded: LoadedSpec, artifacts: Sequence[Artifact], partial: bool) -> list[str]:
    """Every feature of the spec; with --partial, those some artifact passed."""
    if not partial:
        return loaded.spec.ids()
    passed = {fid for a in artifacts for fid, s in a.manifest.statuses.items() if s == "passed"}
    return [fid for fid in loaded.spec.ids() if fid in passed]


def _finish(outcome: CombineOutcome, loaded: LoadedSpec, config: RunConfig, verdict: Outcome, branch: str,
            report: Path | None, junit: Path | None, duration_ms: int) -> None:
    from orchestrator.commands.report import reports

    state = outcome.state
    for note in outcome.notes:
        _say(f"note: {note}")
    problems = outcome.problems
    passed = sum(state.feature(fid).status == "passed" for fid in loaded.spec.ids())
    message = "; ".join(problems) if problems else ""
    result = RunResult(verdict, state, loaded.spec.ids(), message, duration_ms)
    try:
        reports.write_all(result, loaded, config, report_path=report, junit_path=junit)
    except OSError as err:
        sys.stderr.write(f"orchestrate: warning: could not write a report: {err}\n")
    for problem in problems:
        sys.stderr.write(f"orchestrate: combine: {problem}\n")
    _say(f"combined onto {branch}: {passed}/{len(loaded.spec.ids())} feature(s) passed; "
         f"{state.totals.tokens.total:,} tokens, ${state.totals.cost_usd:.4f}")


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()
