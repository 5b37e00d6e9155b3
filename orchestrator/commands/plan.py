"""`orchestrate plan`: a product description (or a quickstart feature list) becomes a reviewed-ready spec.

Phase 1 (`orchestrator.plan.planner`) turns the description into a valid spec; with
`--from feature_list.json` the list's features are kept instead. Phase 2
(`orchestrator.plan.check_writer`), on by default when the project has a test runner or the
description names one, writes each feature's check files first, marks them `protected`, and
records whether each was seen failing (`red`). The spec is written once, atomically, and only
valid; it never replaces an existing file without `--force`. Stopping early (a cost cap, an
unreachable API, an interrupt) writes no spec and removes the check files already written.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.commands.arguments import read_spec
from orchestrator.commands.plan_output import NO_RUNNER_FOUND, print_dry_run, print_result
from orchestrator.config import RunConfig
from orchestrator.plan.check_writer import CheckWriterSettings, FeatureCheck, sweep, write_check
from orchestrator.plan.planner import PlanInvalid, PlannedSpec, PlannerSettings, plan_spec
from orchestrator.plan.result import planned_spec_json, with_checks
from orchestrator.plan.runners import DEFAULT_RUNNER, detect_runner
from orchestrator.plan.written_checks import WrittenCheckFiles
from orchestrator.run.attempt.agent_view import project_file_map
from orchestrator.run.config_sandbox import command_environment
from orchestrator.spec.feature_spec import FeatureSpec
from orchestrator.store.disk.atomic import write_text_atomic
from orchestrator.user_errors import EXIT_FAILED, EXIT_OK, EXIT_STOPPED, UsageError


@dataclass
class PlanRequest:
    """What the user asked `orchestrate plan` for."""

    description: Path | None
    output: Path
    project_dir: Path
    features: int | None = None
    write_checks: bool | None = None
    """None: write checks when a test runner is known (or with --from)."""
    from_list: Path | None = None
    force: bool = False
    dry_run: bool = False
    json_mode: bool = False


def _progress(message: str) -> None:
    sys.stderr.write(f"orchestrate plan: {message}\n")
    sys.stderr.flush()


def plan_command(request: PlanRequest, config: RunConfig) -> int:
    """Plan, write the checks, write the spec; the exit code (0 all red, 1 some check flagged, 3 stopped)."""
    if request.description is None and request.from_list is None:
        raise UsageError("give a DESCRIPTION.md to plan from, or --from feature_list.json to upgrade")
    if request.output.exists() and not request.force and not request.dry_run:
        raise UsageError(f"{request.output} already exists; pass --force to replace it, or -o to write elsewhere")
    if request.features is not None and request.features < 1:
        raise UsageError("--features must be at least 1")
    root = request.project_dir.expanduser()
    if root.exists() and not root.is_dir():
        raise UsageError(f"project directory {root} is not a directory (pass --project-dir DIR)")
    text = _read_description(request.description)
    leave_out = tuple(p for p in (request.description, request.from_list, request.output) if p is not None)
    file_map = project_file_map(root, leave_out=leave_out)
    runner = detect_runner(root, text)
    write_checks = request.write_checks if request.write_checks is not None else (
        runner is not None or request.from_list is not None)
    planner = PlannerSettings(config.model, config.max_output_tokens, max_features=request.features, file_map=file_map)
    upgraded = read_spec(request.from_list).spec if request.from_list is not None else None
    if request.dry_run:
        print_dry_run(text, planner, runner or DEFAULT_RUNNER, upgraded, request.json_mode)
        return EXIT_OK
    if runner is None and write_checks:
        _progress(f"no test runner found in the project or the description: checks are written for {DEFAULT_RUNNER}")
    try:  # like `run`, planning a new project creates its directory
        root.mkdir(parents=True, exist_ok=True)
        request.output.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UsageError(f"cannot create {err.filename}: {err.strerror}") from err
    # The model writes the checks: they run where `run` would run them (SandboxUnavailable: exit 2).
    environment = command_environment(config, root.resolve(), request.output, _progress, checks=())
    checks_settings = CheckWriterSettings(
        config.model, config.max_output_tokens, runner or DEFAULT_RUNNER, config.check_timeout,
        environment=environment, file_map=file_map,
    )
    return _plan(request, config, root, text, planner, runner, checks_settings if write_checks else None, upgraded)


def _plan(
    request: PlanRequest, config: RunConfig, root: Path, text: str, planner: PlannerSettings, runner: str | None,
    checks_settings: CheckWriterSettings | None, upgraded: FeatureSpec | None,
) -> int:
    from orchestrator.llm.client import ModelClient
    from orchestrator.llm.costs.spend import Spend
    from orchestrator.llm.endpoint.sdk import make_sdk_client
    from orchestrator.llm.errors import ApiAuthError, ApiUnavailable, LimitReached, ModelRequestRejected

    # Only the planning model is checked: plan never calls the summarizer or an escalation model.
    settings = config.client_settings()
    client = ModelClient(settings, make_sdk_client(settings, models=("model",)), Spend(), on_retry=_progress)
    files = WrittenCheckFiles(root)
    try:
        planned = upgraded_spec(upgraded) if upgraded is not None else plan_spec(
            client, planner, text,
            runner=runner or (checks_settings.runner if checks_settings else None),
            default_project=request.output.stem, on_progress=_progress,
        )
        checks = _write_checks(client, checks_settings, planned.spec, files, root) if checks_settings else []
        spec = with_checks(planned.spec, checks)
        write_text_atomic(request.output, planned_spec_json(spec))
    except (LimitReached, ApiUnavailable) as err:
        files.rollback()
        _progress(f"stopped: {err}; no spec written, check files removed")
        return EXIT_STOPPED
    except PlanInvalid as err:
        files.rollback()
        _progress(f"{err}\nno spec written; try again, or describe the project more precisely")
        return EXIT_FAILED
    except ModelRequestRejected as err:  # the same request would be refused again: one line, no traceback
        files.rollback()
        _progress(f"stopped: {err}; no spec written, check files removed")
        return EXIT_FAILED
    except ApiAuthError as err:
        files.rollback()
        raise UsageError(str(err)) from err
    except BaseException:
        files.rollback()
        raise
    no_checks = None if checks_settings else (
        "--no-write-checks was given" if request.write_checks is False else NO_RUNNER_FOUND)
    flagged = print_result(request.output, spec, planned, checks, client.spend, request.json_mode, no_checks)
    return EXIT_FAILED if flagged else EXIT_OK


def upgraded_spec(spec: FeatureSpec) -> PlannedSpec:
    """A feature list read with `--from`, kept as it is: phase 1 is not needed."""
    return PlannedSpec(spec, chunks=0)


def _write_checks(
    client: Any, settings: CheckWriterSettings, spec: FeatureSpec, files: WrittenCheckFiles, root: Path
) -> list[FeatureCheck]:
    checks = []
    for index, feature in enumerate(spec.features, 1):
        _progress(f"writing the check of {feature.id} ({index} of {len(spec.features)})")
        checks.append(write_check(client, settings, spec, feature, files, on_progress=_progress))
    _progress("running every check on the current tree")
    sweep(checks, settings)
    return checks


def _read_description(path: Path | None) -> str:
    if path is None:
        return ""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not UTF-8 text; save the description as UTF-8") from None
    except OSError as err:
        raise UsageError(f"cannot read the description {path}: {err.strerror or err}") from None

