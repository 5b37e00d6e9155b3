"""`orchestrate run`: set up (fresh start, lock, output, client), run, write the reports."""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any, NoReturn

from orchestrator.commands.output import make_renderer
from orchestrator.config import ConfigError, RunConfig
from orchestrator.run.checkpoint import clear_stale_index_lock
from orchestrator.spec.load import LoadedSpec
from orchestrator.spec.selection import SelectionError, describe_empty_selection, select
from orchestrator.store.events import EventSink
from orchestrator.store.lock import LockHeld, RunLock
from orchestrator.store.paths import ProjectPaths
from orchestrator.store.state import RunState


def run_command(
    loaded: LoadedSpec,
    config: RunConfig,
    paths: ProjectPaths,
    *,
    only: str | None,
    shard: str | None,
    fresh: bool,
    resets: list[str],
    dry_run: bool,
    json_mode: bool,
    report: Path | None,
    junit: Path | None,
    verbosity: int,
    fail: Callable[[str], NoReturn],
) -> int:
    """Run the spec and return the exit code."""
    unknown_resets = [fid for fid in resets if fid not in set(loaded.spec.ids())]
    if unknown_resets:
        fail(f"--reset: unknown feature id(s): {', '.join(unknown_resets)}")
    spec = loaded.spec
    depends_on = {f.id: f.depends_on for f in spec.features}
    try:
        selected = select(spec.ids(), depends_on, only, shard)
    except SelectionError as err:
        fail(str(err))
    if not selected:
        # An empty shard is not a passed run: say so, touch nothing, and let CI go on (exit 0).
        message = describe_empty_selection(spec.ids(), depends_on, only, shard)
        events = EventSink(make_renderer(json_mode, verbosity), log_path=None)
        events.emit("nothing_selected", message=message, only=only, shard=shard)
        events.close()
        if not dry_run:
            _write_reports(_empty_result(message), loaded, config, report, junit, fail)
        return 0
    if dry_run:
        return _dry_run(loaded, config, paths, only, shard, resets, json_mode, verbosity, fail)

    # The SDK takes seconds to import: only a real run needs it.
    from orchestrator.llm.client import make_sdk_client
    from orchestrator.run.coordinator import RunOptions
    from orchestrator.run.factory import build_runner

    try:
        sdk = make_sdk_client(config)
    except ConfigError as err:
        fail(str(err))
    _create_project_dir(paths, fail)
    if fresh:
        _start_fresh(paths, fail)
    _keep_backups_out_of_git(paths)  # also for backups made before the project became a repository
    events = EventSink(make_renderer(json_mode, verbosity), paths.events_log)
    options = RunOptions(only=only, shard=shard, resets=list(resets))
    try:
        with RunLock(paths.lock_file, on_warning=events.warn):
            if config.commit:  # a git killed with an earlier run may have left .git/index.lock
                clear_stale_index_lock(paths.root, events.warn)
            try:
                runner = build_runner(loaded, config, options, paths, events, sdk=sdk)
            except SelectionError as err:
                fail(str(err))
            result = runner.run()
    except LockHeld as err:
        fail(str(err))
    finally:
        events.close()
    _write_reports(result, loaded, config, report, junit, fail)
    return result.exit_code


def _start_fresh(paths: ProjectPaths, fail: Callable[[str], NoReturn]) -> None:
    """Move the old state aside, after making sure no run is using it."""
    lock = RunLock(paths.lock_file)
    try:
        lock.acquire()  # proves no live run owns the project (a stale lock is taken over)
    except LockHeld as err:
        fail(f"--fresh: {err}")
    lock.release()
    moved = move_aside(paths)
    if moved is not None:
        sys.stderr.write(f"orchestrate: --fresh: previous state moved to {moved}\n")


def move_aside(paths: ProjectPaths) -> Path | None:
    """--fresh: rename .autonomous to .autonomous.bak-<time>; nothing is deleted."""
    if not paths.autonomous.exists():
        return None
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target, counter = paths.fresh_backup(stamp), 0
    while target.exists():
        counter += 1
        target = paths.fresh_backup(f"{stamp}-{counter}")
    shutil.move(str(paths.autonomous), str(target))
    return target


def _keep_backups_out_of_git(paths: ProjectPaths) -> None:
    """Old events, logs and memory must never reach a checkpoint, nor the user's `git add -A`."""
    from orchestrator.run.checkpoint import CheckpointError, exclude_run_state, is_git_repo

    if not paths.fresh_backups() or not is_git_repo(paths.root):
        return
    try:
        exclude_run_state(paths.root)
    except CheckpointError as err:
        sys.stderr.write(f"orchestrate: warning: --fresh backups may be committed: {err}\n")


def _create_project_dir(paths: ProjectPaths, fail: Callable[[str], NoReturn]) -> None:
    """`run` builds from an empty directory, so it creates a missing one (a dry run does not)."""
    try:
        paths.root.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        fail(f"cannot create project directory {paths.root}: {err.strerror}")


def _empty_result(message: str) -> Any:
    """What the reports need of a run that selected nothing."""
    return SimpleNamespace(state=RunState(), selected=[], outcome="empty", exit_code=0, message=message, duration_ms=0)


def _dry_run(
    loaded: LoadedSpec, config: RunConfig, paths: ProjectPaths, only: str | None, shard: str | None,
    resets: list[str], json_mode: bool, verbosity: int, fail: Callable[[str], NoReturn],
) -> int:
    from orchestrator.commands.dry_run import print_prompts

    events = EventSink(make_renderer(json_mode, verbosity if verbosity >= 0 else 0), log_path=None)
    try:
        print_prompts(loaded, config, paths, events, only=only, shard=shard, resets=resets)
    except SelectionError as err:
        fail(str(err))
    finally:
        events.close()
    return 0


def _write_reports(result: Any, loaded: LoadedSpec, config: RunConfig, report: Path | None, junit: Path | None,
                   fail: Callable[[str], NoReturn]) -> None:
    from orchestrator.commands import reports

    try:
        reports.write_all(result, loaded, config, report_path=report, junit_path=junit)
    except OSError as err:
        sys.stderr.write(f"orchestrate: warning: could not write a report: {err}\n")
