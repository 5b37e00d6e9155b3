"""`orchestrate run`: set up (fresh start, lock, output, client), run, write the reports."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable, NoReturn

from orchestrator.config import ConfigError, RunConfig
from orchestrator.events import EventSink
from orchestrator.git_checkpoint import clear_stale_index_lock
from orchestrator.lock import LockHeld, RunLock
from orchestrator.output import make_renderer
from orchestrator.paths import ProjectPaths
from orchestrator.selection import SelectionError
from orchestrator.spec import LoadedSpec


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
    from orchestrator.runner import RunOptions, Runner

    unknown_resets = [fid for fid in resets if fid not in set(loaded.spec.ids())]
    if unknown_resets:
        fail(f"--reset: unknown feature id(s): {', '.join(unknown_resets)}")
    options = RunOptions(only=only, shard=shard, resets=list(resets))
    if dry_run:
        return _dry_run(loaded, config, paths, options, json_mode, verbosity, fail)

    from orchestrator.model_client import make_sdk_client

    try:
        sdk = make_sdk_client(config)
    except ConfigError as err:
        fail(str(err))
    if fresh:
        _start_fresh(paths, fail)
    events = EventSink(make_renderer(json_mode, verbosity), paths.events_log)
    try:
        with RunLock(paths.lock_file, on_warning=events.warn):
            if config.commit:  # a git killed with an earlier run may have left .git/index.lock
                clear_stale_index_lock(paths.root, events.warn)
            try:
                runner = Runner(loaded, config, options, paths, events, sdk=sdk)
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
    from orchestrator.cli import move_aside

    lock = RunLock(paths.lock_file)
    try:
        lock.acquire()  # proves no live run owns the project (a stale lock is taken over)
    except LockHeld as err:
        fail(f"--fresh: {err}")
    lock.release()
    moved = move_aside(paths)
    if moved is not None:
        sys.stderr.write(f"orchestrate: --fresh: previous state moved to {moved}\n")


def _dry_run(
    loaded: LoadedSpec, config: RunConfig, paths: ProjectPaths, options: Any, json_mode: bool, verbosity: int,
    fail: Callable[[str], NoReturn],
) -> int:
    from orchestrator.dry_run import print_prompts

    events = EventSink(make_renderer(json_mode, verbosity if verbosity >= 0 else 0), log_path=None)
    try:
        print_prompts(loaded, config, paths, options, events)
    except SelectionError as err:
        fail(str(err))
    finally:
        events.close()
    return 0


def _write_reports(result: Any, loaded: LoadedSpec, config: RunConfig, report: Path | None, junit: Path | None,
                   fail: Callable[[str], NoReturn]) -> None:
    from orchestrator import reports

    try:
        reports.write_all(result, loaded, config, report_path=report, junit_path=junit)
    except OSError as err:
        sys.stderr.write(f"orchestrate: warning: could not write a report: {err}\n")
