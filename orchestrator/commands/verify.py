"""`orchestrate verify`: re-run the passed features' checks on what you have, without the model.

In a checkout outside the project (`orchestrator.run.checks.clean_checkout`) of HEAD plus your
uncommitted changes to tracked files and your untracked files that are not ignored (through a
private index: your index and tree are untouched), with the project's ignored files that no run
made or changed; `--committed`: of HEAD alone, as a run's final verification. In the working tree
where there is no commit (not a git repository, `commit = false`).

Exit 0 when every check passes, 1 when any fails (each named), 2 on a usage problem. With
`--reopen` the failing features become `regressed`, so the next `orchestrate run` rebuilds
them with the failure fed back. What a nightly CI job runs to catch drift in a built project.
"""

from __future__ import annotations

import json
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from orchestrator.commands.arguments import read_spec
from orchestrator.commands.rendering.output import excerpt_lines
from orchestrator.config import RunConfig
from orchestrator.git.repository_guard import refuse_foreign_git
from orchestrator.run.checks.clean_checkout import VerificationTree, uncommitted, verification_tree
from orchestrator.run.checks.final_verification import left_out_note, mark_regressed, passed_checks, verify_passed
from orchestrator.run.checks.running.check_pool import CheckRun, check_runner, default_concurrency
from orchestrator.safety.credentials.redaction import redact
from orchestrator.safety.environment import CommandEnvironment
from orchestrator.spec.load import LoadedSpec
from orchestrator.store.check_excerpt import check_verdict, failure_reason
from orchestrator.store.disk.atomic import write_report_atomic
from orchestrator.store.disk.lock import LockHeld, RunLock
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.feature_log import find_feature_log, write_feature_log
from orchestrator.store.run_state import RunState
from orchestrator.store.state import StateStore
from orchestrator.user_errors import EXIT_FAILED, EXIT_OK, UsageError


def _warn(message: str) -> None:
    sys.stderr.write(f"orchestrate: warning: {redact(message)}\n")


def verify_command(
    paths: ProjectPaths, config: RunConfig, spec_path: Path | None, *, only: str | None, json_output: bool,
    junit: Path | None, reopen: bool, committed: bool = False,
) -> int:
    """Re-run the checks; print, write the JUnit file, mark regressions when asked; the exit code."""
    try:
        # A run writing the same state at the same time would lose one side's changes; checks
        # running beside a run's agent would see half-done work.
        with RunLock(paths.lock_file, on_warning=_warn):
            return _verify(paths, config, spec_path, only=only, json_output=json_output, junit=junit, reopen=reopen,
                           committed=committed)
    except LockHeld as err:
        raise UsageError(f"cannot verify now: {err}") from err


def _verify(
    paths: ProjectPaths, config: RunConfig, spec_path: Path | None, *, only: str | None, json_output: bool,
    junit: Path | None, reopen: bool, committed: bool,
) -> int:
    refuse_foreign_git(paths.root)  # an agent's `git init` in a project that had no repository: never read
    store = StateStore(paths, on_warning=_warn)
    state = store.load()
    if state is None:
        raise UsageError(f"no run state in {paths.autonomous}: nothing has passed yet (run: orchestrate run SPEC)")
    loaded = _spec(state, spec_path)
    wanted = _only(only, loaded, state)
    started = time.monotonic()
    environment = _environment(config, paths, loaded)
    runner = check_runner(environment, config.check_timeout)
    # As a run's final verification: in a checkout outside the project where there is a commit.
    with verification_tree(paths.root, paths.run_times, committed=config.commit, on_warning=_warn,
                           with_changes=not committed, share_dirs=environment.sandbox.active) as tree:
        if committed:
            _warn_uncommitted(paths, tree)
        runs = verify_passed(tree, loaded.spec, state, runner=runner,
                             concurrency=config.check_concurrency or default_concurrency(), only=wanted, on_warning=_warn)
    failed = [run for run in runs if not run.success]
    note = left_out_note(tree, runs)
    if note:
        _warn(note)
    if reopen and failed:
        for run in failed:
            mark_regressed(state, run, note)
            _update_log(paths, state, run.feature_id)
        store.save(state)
    duration = time.monotonic() - started
    if junit is not None:
        write_report_atomic(junit, _junit(runs, loaded, duration))
    sys.stdout.write(_json(runs, reopen, tree) if json_output else _text(runs, reopen, duration, tree))
    return EXIT_FAILED if failed else EXIT_OK


def _warn_uncommitted(paths: ProjectPaths, tree: VerificationTree) -> None:
    """Edits not committed are not verified: say so, rather than pass them silently."""
    if tree.commit is None:
        return
    left_out = uncommitted(paths.root)
    if left_out:
        shown = ", ".join(left_out[:5]) + (f" and {len(left_out) - 5} more" if len(left_out) > 5 else "")
        _warn(f"verifying commit {tree.commit[:12]} (--committed); changes not committed are not part of it "
              f"({shown}): leave out --committed to verify them too")


def _spec(state: RunState, spec_path: Path | None) -> LoadedSpec:
    if spec_path is None:
        if not state.spec_path:
            raise UsageError("the run state names no spec; pass --spec SPEC")
        spec_path = Path(state.spec_path)
    return read_spec(spec_path)


def _only(only: str | None, loaded: LoadedSpec, state: RunState) -> list[str] | None:
    if only is None:
        return None
    ids = [part.strip() for part in only.split(",") if part.strip()]
    known = set(loaded.spec.ids())
    unknown = [fid for fid in ids if fid not in known]
    if unknown or not ids:
        raise UsageError(f"--only: unknown feature id(s): {', '.join(unknown) or '(none given)'}")
    not_passed = [fid for fid in ids if fid not in {f for f, _ in passed_checks(loaded.spec, state)}]
    if not_passed:
        _warn(f"not verified (not passed, or no check): {', '.join(not_passed)}")
    return ids


def _update_log(paths: ProjectPaths, state: RunState, feature_id: str) -> None:
    log = find_feature_log(paths, feature_id)
    if log is not None:
        write_feature_log(paths, log.with_verdict(state.feature(feature_id)))


def _where(tree: VerificationTree) -> str:
    if tree.commit is not None and tree.changes:
        return f"a clean checkout of commit {tree.commit[:12]} with your uncommitted changes ({len(tree.changes)} file(s))"
    if tree.commit is not None:
        return f"a clean checkout of commit {tree.commit[:12]}"
    return "the working tree (no commit to check out: not a git repository, or checkpoints are off)"


def _text(runs: list[CheckRun], reopen: bool, duration: float, tree: VerificationTree) -> str:
    lines = []
    for run in runs:
        why = f": {run.result.error}" if run.result.error else ""
        lines.append(f"{run.feature_id}: `{run.result.command}` {check_verdict(run.result, 'ok')}{why}")
        if not run.success:  # its first meaningful lines; `logs ID` and `--json` have the whole output
            lines += excerpt_lines(run.result.output, None, "    ")
    failed = [run.feature_id for run in runs if not run.success]
    if failed:
        after = "marked regressed; the next `orchestrate run` rebuilds them" if reopen else \
            "run `orchestrate verify --reopen` to have the next run rebuild them"
        lines.append(f"verify: {len(failed)} of {len(runs)} check(s) FAILED in {_where(tree)}: {', '.join(failed)}; {after}")
    else:
        lines.append(f"verify: all {len(runs)} check(s) passed in {duration:.1f}s, in {_where(tree)}")
    return redact("\n".join(lines)) + "\n"


def _json(runs: list[CheckRun], reopen: bool, tree: VerificationTree) -> str:
    data = {
        "checked": len(runs), "passed": sum(run.success for run in runs), "tree": tree.kind, "commit": tree.commit,
        "uncommitted": list(tree.changes), "left_out": tree.carried.left_out[:100],
        "failed": [run.feature_id for run in runs if not run.success], "reopened": reopen,
        "results": [{**run.record().dump(), "output": run.result.output} for run in runs],
    }
    return redact(json.dumps(data, ensure_ascii=False)) + "\n"


def _junit(runs: list[CheckRun], loaded: LoadedSpec, duration: float) -> str:
    failures = sum(not run.success for run in runs)
    suite = ET.Element("testsuite", {
        "name": loaded.spec.project, "tests": str(len(runs)), "failures": str(failures),
        "errors": "0", "skipped": "0", "time": f"{duration:.3f}",
    })
    for run in runs:
        feature = loaded.spec.feature(run.feature_id)
        case = ET.SubElement(suite, "testcase", {
            "classname": feature.category, "name": run.feature_id, "time": f"{run.duration_ms / 1000:.3f}",
        })
        if not run.success:
            node = ET.SubElement(case, "failure", {
                "message": f"regressed: {failure_reason(run.result.output, run.result.error, run.result.exit_code)}",
                "type": f"exit {run.result.exit_code}",
            })
            node.text = "".join(ch if ch in "\t\n\r" or ord(ch) >= 0x20 else "\ufffd" for ch in redact(run.result.output))
    suites = ET.Element("testsuites")
    suites.append(suite)
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def _environment(config: RunConfig, paths: ProjectPaths, loaded: LoadedSpec) -> CommandEnvironment:
    """The checks run in the environment a run would give them (`--sandbox` / orchestrate.toml)."""
    from orchestrator.run.checks.protection.outside_reads import spec_checks
    from orchestrator.run.config_sandbox import command_environment

    return command_environment(config, paths.root, loaded.path, _warn, checks=spec_checks(loaded.spec))  # SandboxUnavailable: exit 2
