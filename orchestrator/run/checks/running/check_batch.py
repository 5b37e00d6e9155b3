"""Several plain pytest checks run as one pytest process, each feature's verdict read back.

Re-running a thousand features' checks one process each costs a thousand interpreter starts and
collections. Checks that are plain pytest invocations (`orchestrator.run.checks.running.pytest_command`) with the
same launcher and options run together instead: one `pytest OPTIONS --continue-on-collection-errors
TARGETS...` over the union of their targets (test files named by their directory, the probe
collecting only the files wanted there), at most `MAX_BATCH` checks a process (several
processes at once when the pool allows). The probe's record (`orchestrator.run.checks.running.pytest_outcomes`)
says how each test ended; a check passes there when the tests it names were all collected and
none failed.

Anything else runs as before, one process per check: a check that is not a plain pytest command;
a check whose tests failed, errored or were not found in the combined run (so its verdict, exit
code and output are exactly what it gives alone); and every check of a combined run that did not
finish reporting (it could not start, timed out after one check's timeout, or ended early).
What batching can hide: a test that passes only because another feature's test ran before it in
the same process (state one test leaves behind); the checks it does fail always run alone.
"""

from __future__ import annotations

import json
import math
import os
import shlex
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from orchestrator.run.checks.running.pytest_command import PytestInvocation, pytest_invocation
from orchestrator.run.checks.running.pytest_outcomes import ONLY_VARIABLE, PytestRecord
from shared_base.check_result import CheckResult

MAX_BATCH = 50
# Fewer checks than this per process are not worth splitting further for parallelism.
_MIN_SPLIT = 10
_REPORTED = (0, 1)  # pytest's exit statuses when every test ran (passed, or some failed)

# (command, workspace, variables added to its environment) -> its result and what pytest recorded
RecordedRunner = Callable[[str, Path, Mapping[str, str]], tuple[CheckResult, PytestRecord]]
Timed = tuple[CheckResult, int]  # a result and how long it took, in milliseconds
_T = TypeVar("_T")
_R = TypeVar("_R")


@dataclass(frozen=True)
class Batch:
    """Checks that run as one pytest process."""

    members: tuple[tuple[str, PytestInvocation], ...]

    def command(self) -> str:
        first = self.members[0][1]
        named = dict.fromkeys(_named_as(target) for _, invocation in self.members for target in invocation.targets)
        return shlex.join([*first.launcher, *first.options, "--continue-on-collection-errors", *named])

    def wanted(self, workspace: Path) -> str:
        """The files and directories the members name, for the probe to collect nothing else (JSON)."""
        here = os.path.realpath(workspace)
        paths = (os.path.normpath(os.path.join(here, target.partition("::")[0]))
                 for _, invocation in self.members for target in invocation.targets)
        return json.dumps(list(dict.fromkeys(paths)))


def _named_as(target: str) -> str:
    """How a target goes on the combined command line: a test file by its directory, which the probe
    narrows to the files wanted. pytest walks a directory again for every file named in it (a batch of
    50 files in a directory of 1,000 took 22 s, against 4 s in one of 100)."""
    if "::" in target or not target.endswith(".py"):
        return target
    return os.path.dirname(target) or "."


def plan_batches(commands: Sequence[str], concurrency: int) -> tuple[list[Batch], list[str]]:
    """The batches these commands make, and the commands that run alone."""
    groups: dict[object, list[tuple[str, PytestInvocation]]] = {}
    alone: list[str] = []
    for command in commands:
        invocation = pytest_invocation(command)
        key = invocation.group_key() if invocation is not None else None
        if invocation is None or key is None:
            alone.append(command)
        else:
            groups.setdefault(key, []).append((command, invocation))
    batches: list[Batch] = []
    for members in groups.values():
        if len(members) < 2:
            alone += [command for command, _ in members]
            continue
        count = max(math.ceil(len(members) / MAX_BATCH), min(concurrency, math.ceil(len(members) / _MIN_SPLIT)))
        size = math.ceil(len(members) / count)
        batches += [Batch(tuple(members[i:i + size])) for i in range(0, len(members), size)]
    return batches, alone


def run_batched(
    commands: Sequence[str], workspace: Path, runner: RecordedRunner, concurrency: int,
    on_done: Callable[[str], None] = lambda _command: None, *, seen_at: Path | None = None,
) -> dict[str, Timed]:
    """Each command's result: from a combined pytest run where it settles there, else from its own
    run. `on_done` hears each command as its result is settled (from the checks' threads).
    `seen_at`: where the checks see `workspace` (a verification checkout, in the sandbox)."""
    batches, alone = plan_batches(commands, concurrency)
    seen = seen_at or workspace

    def combined(batch: Batch) -> dict[str, Timed]:
        started = time.monotonic()
        result, record = runner(batch.command(), workspace, {ONLY_VARIABLE: batch.wanted(seen)})
        share = int((time.monotonic() - started) * 1000 / len(batch.members))
        passed = settled(batch, result, record, seen)
        for command in passed:
            on_done(command)
        return {command: (verdict, share) for command, verdict in passed.items()}

    done: dict[str, Timed] = {}
    for outcome in parallel(combined, batches, concurrency):
        done.update(outcome)

    def single(command: str) -> dict[str, Timed]:
        started = time.monotonic()
        result = runner(command, workspace, {})[0]
        on_done(command)
        return {command: (result, int((time.monotonic() - started) * 1000))}

    rest = [*alone, *(command for batch in batches for command, _ in batch.members if command not in done)]
    for outcome in parallel(single, rest, concurrency):
        done.update(outcome)
    return done


def settled(batch: Batch, result: CheckResult, record: PytestRecord, workspace: Path) -> dict[str, CheckResult]:
    """The members of `batch` that passed in its combined run (the others run alone)."""
    if result.exit_code not in _REPORTED or record.first_status() != result.exit_code:
        return {}  # it did not start, timed out, or ended before reporting: every member runs alone
    tests = _located(record)
    here = os.path.realpath(workspace)
    passed: dict[str, CheckResult] = {}
    for command, invocation in batch.members:
        outcomes = [outcome for target in invocation.targets for outcome in _outcomes_of(here, target, tests)]
        if outcomes and all(outcome in ("passed", "skipped") for outcome in outcomes):
            others = len(batch.members) - 1
            passed[command] = CheckResult(
                command=command, success=True, exit_code=0, attempt=result.attempt,
                output=f"{len(outcomes)} test(s) passed, in one pytest process with {others} other check(s)\n",
            )
    return passed


def _located(record: PytestRecord) -> list[tuple[str, str, str]]:
    """(absolute file or directory, the node id's rest, outcome) of each recorded test."""
    real: dict[str, str] = {}
    located = []
    for root, node_id, outcome in record.tests:
        base = real.setdefault(root, os.path.realpath(root))
        path, _, rest = node_id.partition("::")
        located.append((os.path.normpath(os.path.join(base, path)), f"::{rest}" if rest else "", outcome))
    return located


def _outcomes_of(here: str, target: str, tests: Iterable[tuple[str, str, str]]) -> list[str]:
    path, _, rest = target.partition("::")
    where = os.path.normpath(os.path.join(here, path))
    suffix = f"::{rest}" if rest else ""
    found = []
    for file, node_rest, outcome in tests:
        if file != where and not file.startswith(where + os.sep):
            continue
        if suffix and not (node_rest == suffix or node_rest.startswith((suffix + "::", suffix + "["))):
            continue
        found.append(outcome)
    return found


def parallel(work: Callable[[_T], _R], items: Sequence[_T], concurrency: int) -> list[_R]:
    """`work` over `items`, up to `concurrency` at once, results in order."""
    workers = max(1, min(concurrency, len(items)))
    if workers == 1:
        return [work(item) for item in items]
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="recheck")
    try:
        return list(pool.map(work, items))
    finally:
        # Interrupted: the checks not started never start; the running ones end with their timeout.
        pool.shutdown(wait=False, cancel_futures=True)
