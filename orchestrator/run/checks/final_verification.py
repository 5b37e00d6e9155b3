"""Final verification: every passed feature's check, run again on the tree the run leaves behind.

A feature whose check fails there is `regressed`: its failure becomes its last verification
(output kept, so the next run feeds it back when it rebuilds the feature). Used at the end of
`orchestrate run` and by `orchestrate verify`; it takes the tree to verify (a clean checkout of the
final commit where there is one: `orchestrator.run.checks.clean_checkout`) and the state.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from orchestrator.run.base.books import RunBooks
from orchestrator.run.base.feature_logs import FeatureLogs
from orchestrator.run.checks.clean_checkout import VerificationTree
from orchestrator.run.checks.running.check_pool import CheckRun, CheckRunner, Progress, in_checkout, run_checks
from orchestrator.spec.feature_spec import FeatureSpec
from orchestrator.store.check_excerpt import failure_reason
from orchestrator.store.event_kinds import FinalVerification
from orchestrator.store.events import EventSink
from orchestrator.store.records import CheckFailure
from orchestrator.store.run_state import RunState

REGRESSED_REASON = "its check failed again on a later tree"


def passed_checks(spec: FeatureSpec, state: RunState, only: Sequence[str] | None = None) -> list[tuple[str, str]]:
    """(feature id, check command) of every passed feature with a check, in spec order (`only`: those ids)."""
    wanted = set(only) if only is not None else None
    checks = []
    for feature in spec.features:
        entry = state.features.get(feature.id)
        command = spec.check_command(feature)
        if entry is None or entry.status != "passed" or not command:
            continue
        if wanted is None or feature.id in wanted:
            checks.append((feature.id, command))
    return checks


def verify_passed(
    tree: VerificationTree, spec: FeatureSpec, state: RunState, *, runner: CheckRunner, concurrency: int,
    only: Sequence[str] | None = None, on_warning: Callable[[str], None] = lambda _m: None,
    on_progress: Progress | None = None,
) -> list[CheckRun]:
    """Re-run the passed features' checks in `tree`, up to `concurrency` at once."""
    checks = passed_checks(spec, state, only)
    return run_checks(checks, tree.path, in_checkout(runner, tree.checkout, tree.live, tree.carried.shared), concurrency, on_warning,
                      put_back=not tree.scratch, on_progress=on_progress)


def left_out_note(tree: VerificationTree, runs: Sequence[CheckRun]) -> str:
    """When a check failed in the checkout: which of the project's ignored files it did not have."""
    if any(not run.success for run in runs) and tree.carried.left_out:
        return tree.carried.describe()
    return ""


def mark_regressed(state: RunState, run: CheckRun, note: str = "") -> None:
    """Record in `state` that `run`'s feature no longer passes: the next run rebuilds it. `note`:
    what the tree it failed in lacked (`left_out_note`)."""
    entry = state.feature(run.feature_id)
    entry.status = "regressed"
    entry.reason = f"{REGRESSED_REASON}: {failure_reason(run.result.output, run.result.error, run.result.exit_code)}"
    if note:
        entry.reason += f" ({note})"
    entry.last_verification = run.result


def final_verification(
    tree: VerificationTree, spec: FeatureSpec, books: RunBooks, logs: FeatureLogs, events: EventSink, *,
    runner: CheckRunner, concurrency: int,
) -> list[str]:
    """At the end of a run: re-run every passed feature's check in `tree` (a clean checkout of the
    final commit, `orchestrator.run.checks.clean_checkout`), mark the failing ones `regressed` (state and
    log), emit `final_verification`; the regressed ids."""
    started = time.monotonic()
    runs = verify_passed(tree, spec, books.state, runner=runner, concurrency=concurrency, on_warning=events.warn,
                         on_progress=lambda done, total: events.phase("final verification", None, done, total))
    broken = [run for run in runs if not run.success]
    note = left_out_note(tree, runs)
    if note:
        events.warn(f"final verification: {note}")
    for run in broken:
        mark_regressed(books.state, run, note)
        books.record(run.feature_id)
        log = logs.read(run.feature_id)
        if log is not None:
            logs.write(log.with_verdict(books.state.feature(run.feature_id)))
    events.emit(FinalVerification(
        checked=len(runs), passed=len(runs) - len(broken),
        failed=[run.feature_id for run in broken], duration_ms=int((time.monotonic() - started) * 1000),
        tree=tree.kind, commit=tree.commit, failures=[CheckFailure.of(run.feature_id, run.result) for run in broken],
    ))
    return [run.feature_id for run in broken]
