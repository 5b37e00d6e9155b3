"""`orchestrate run`: set up (fresh start, lock, output, client), run, write the reports."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.commands.rendering.live_view import make_renderer
from orchestrator.commands.rendering.user_lines import WARNING, say
from orchestrator.config import ConfigError, RunConfig
from orchestrator.git.index_lock import clear_stale_index_lock
from orchestrator.git.repository_guard import record_git_at_start
from orchestrator.run.verdict import Outcome, RunResult
from orchestrator.spec.load import LoadedSpec
from orchestrator.spec.selection import SelectionError, describe_empty_selection, select
from orchestrator.store.disk.lock import LockHeld, RunLock
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.event_kinds import NothingSelected
from orchestrator.store.events import EventSink
from orchestrator.tools.shell_policy import configured_policy
from orchestrator.user_errors import EXIT_OK, UsageError


@dataclass(frozen=True)
class RunRequest:
    """What `orchestrate run` was asked for, besides the spec, the config and the project."""

    only: str | None = None
    shard: str | None = None
    fresh: bool = False
    resets: list[str] = field(default_factory=list)
    dry_run: bool = False
    json_mode: bool = False
    report: Path | None = None
    junit: Path | None = None
    verbosity: int = 0  # -1 for --quiet
    own_interrupt: Callable[[], bool] | None = None  # the demo's: was that Ctrl-C its own? (RunOptions)


def run_command(loaded: LoadedSpec, config: RunConfig, paths: ProjectPaths, request: RunRequest) -> int:
    """Run the spec and return the exit code; raise `UsageError` when it cannot start."""
    _check_shell_policy(config)
    selected = _selected(loaded, request)
    if not selected:
        return _nothing_selected(loaded, config, request)
    if request.dry_run:
        return _dry_run(loaded, config, paths, request)
    result = _run(loaded, config, paths, request)
    _write_reports(result, loaded, config, request)
    if config.html is not None:
        from orchestrator.commands.report.html_report import write_html_after_run

        write_html_after_run(paths, config.html, loaded)
    return result.exit_code


def _check_shell_policy(config: RunConfig) -> None:
    """A bad `[security] deny` regex stops the run before it starts, not when the first command runs."""
    try:
        configured_policy(config.security.deny)
    except ValueError as err:
        raise ConfigError(f"bad configuration:\n  orchestrate.toml: security.deny: {err}") from None


def _selected(loaded: LoadedSpec, request: RunRequest) -> list[str]:
    """The feature ids --only and --shard select; a bad --reset, --only or --shard is a UsageError."""
    spec = loaded.spec
    unknown_resets = [fid for fid in request.resets if fid not in set(spec.ids())]
    if unknown_resets:
        raise UsageError(f"--reset: unknown feature id(s): {', '.join(unknown_resets)}")
    try:
        return select(spec.ids(), {f.id: f.depends_on for f in spec.features}, request.only, request.shard)
    except SelectionError as err:
        raise UsageError(str(err)) from err


def _nothing_selected(loaded: LoadedSpec, config: RunConfig, request: RunRequest) -> int:
    """An empty shard is not a passed run: say so, touch nothing, and let CI go on (exit 0)."""
    spec = loaded.spec
    depends_on = {f.id: f.depends_on for f in spec.features}
    message = describe_empty_selection(spec.ids(), depends_on, request.only, request.shard)
    events = EventSink(make_renderer(request.json_mode, request.verbosity), log_path=None)
    events.emit(NothingSelected(message=message, only=request.only, shard=request.shard))
    events.close()
    if not request.dry_run:
        _write_reports(_empty_result(message), loaded, config, request)
    return EXIT_OK


def _run(loaded: LoadedSpec, config: RunConfig, paths: ProjectPaths, request: RunRequest) -> RunResult:
    """The run itself, under the project's lock; its result (for the reports and the exit code)."""
    # The SDK takes seconds to import: only a real run needs it.
    from orchestrator.claude_code.billing import makes_own_calls
    from orchestrator.claude_code.choice import agent_for
    from orchestrator.llm.endpoint.sdk import make_sdk_client
    from orchestrator.run.factory import build_runner
    from orchestrator.run.runner import RunOptions

    agent = agent_for(config)  # UsageError when --agent claude-code cannot run here
    # On a Claude plan (no key) this program makes no model call of its own: Claude Code pays
    # through the user's sign-in, and the Context Agent compresses without its summarizer.
    own_calls = makes_own_calls(config.agent, config.provider)
    sdk = make_sdk_client(config.client_settings()) if own_calls else None  # ClientSetupError: no key
    if config.jobs > 1 and not config.commit:
        raise UsageError("--jobs N merges each passed feature as a checkpoint commit: it cannot go with --no-commit")
    _create_project_dir(paths)
    if request.fresh:
        _start_fresh(paths)
    _keep_backups_out_of_git(paths)  # also for backups made before the project became a repository
    events = EventSink(
        make_renderer(request.json_mode, request.verbosity, config.max_cost, tagged=config.jobs > 1), paths.events_log
    )
    options = RunOptions(only=request.only, shard=request.shard, resets=list(request.resets), billing=billing_line(config),
                         own_interrupt=request.own_interrupt)
    try:
        with RunLock(paths.lock_file, on_warning=events.warn):
            if config.jobs > 1:  # worktrees need a repository with a commit (a new or empty directory gets one)
                from orchestrator.git.worktrees import prepare_repository

                prepare_repository(paths.root, events.warn)
            record_git_at_start(paths.root)  # a `.git` that appears during the run is never used
            options.workspace = _branch_workspace(paths, config, request)
            if config.commit:  # a git killed with an earlier run may have left .git/index.lock
                clear_stale_index_lock(options.workspace or paths.root, events.warn)
            try:
                runner = build_runner(loaded, config, options, paths, events, sdk=sdk, agent=agent)
            except SelectionError as err:
                raise UsageError(str(err)) from err
            return runner.run()
    except LockHeld as err:
        raise UsageError(str(err)) from err
    finally:
        events.close()


def billing_line(config: RunConfig) -> str | None:
    """Who pays Claude Code's calls and how `--max-cost` holds, in one line; None for the built-in agent."""
    if config.agent != "claude-code":
        return None
    from orchestrator.claude_code.billing import billing_mode, describe_billing

    return describe_billing(billing_mode(config.provider), config.max_cost, config.provider,
                            config.plan_attempt_budget)


def _branch_workspace(paths: ProjectPaths, config: RunConfig, request: RunRequest) -> Path | None:
    """`--branch NAME` (or a shard's own branch): the worktree the run works in; None for the project."""
    from orchestrator.git.branch_worktree import open_branch_workspace, wanted_branch

    branch = wanted_branch(config.branch, request.shard, commit=config.commit, root=paths.root)
    if branch is None:
        return None
    return open_branch_workspace(paths, branch, _note)


def _note(message: str) -> None:
    say(message, label="orchestrate: ")


def _start_fresh(paths: ProjectPaths) -> None:
    """Move the old state aside, after making sure no run is using it."""
    lock = RunLock(paths.lock_file)
    try:
        lock.acquire()  # proves no live run owns the project (a stale lock is taken over)
    except LockHeld as err:
        raise UsageError(f"--fresh: {err}") from err
    lock.release()
    moved = move_aside(paths)
    if moved is not None:
        say(f"previous state moved to {moved}", label="orchestrate: --fresh: ")


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
    from orchestrator.git.checkpoint import exclude_run_state, is_git_repo
    from orchestrator.git.run_git import CheckpointError

    if not paths.fresh_backups() or not is_git_repo(paths.root):
        return
    try:
        exclude_run_state(paths.root)
    except CheckpointError as err:
        say(f"--fresh backups may be committed: {err}", label=WARNING, label_style="yellow")


def _create_project_dir(paths: ProjectPaths) -> None:
    """`run` builds from an empty directory, so it creates a missing one (a dry run does not)."""
    try:
        paths.root.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UsageError(f"cannot create project directory {paths.root}: {err.strerror}") from err


def _empty_result(message: str) -> RunResult:
    """What the reports need of a run that selected nothing."""
    return RunResult(Outcome.EMPTY, message=message)


def _dry_run(loaded: LoadedSpec, config: RunConfig, paths: ProjectPaths, request: RunRequest) -> int:
    from orchestrator.commands.prompt_preview.dry_run import print_prompts

    events = EventSink(make_renderer(request.json_mode, max(request.verbosity, 0)), log_path=None)
    try:
        print_prompts(loaded, config, paths, events, only=request.only, shard=request.shard, resets=request.resets)
    except SelectionError as err:
        raise UsageError(str(err)) from err
    finally:
        events.close()
    return EXIT_OK


def _write_reports(result: RunResult, loaded: LoadedSpec, config: RunConfig, request: RunRequest) -> None:
    from orchestrator.commands.report import reports

    try:
        reports.write_all(result, loaded, config, report_path=request.report, junit_path=request.junit)
    except OSError as err:
        say(f"could not write a report: {err}", label=WARNING, label_style="yellow")
