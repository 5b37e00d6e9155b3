"""What a run here would show a feature's next attempt, for the commands that only show it
(`orchestrate context`, `orchestrate run --dry-run`): the `## Workspace` section, a retry's note
on what the previous attempt left and reported, and the files the feature is known to touch
(which decide the failures to avoid it is shown). Nothing here runs a check or writes."""

from __future__ import annotations

from pathlib import Path

from orchestrator.config import RunConfig
from orchestrator.json_types import AgentReport
from orchestrator.run.attempt.agent_view import NO_VIEW, AttemptView, retry_note, workspace_section
from orchestrator.run.attempt.context_view import known_files
from orchestrator.run.checks.assessment import assess
from orchestrator.run.checks.guard.regression import RegressionGuard
from orchestrator.run.checks.protection.outside_reads import spec_checks
from orchestrator.run.config_sandbox import command_environment
from orchestrator.spec.feature_spec import Feature, FeatureSpec
from orchestrator.spec.load import LoadedSpec
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.records import Assessment
from orchestrator.store.run_state import FeatureState, RunState
from orchestrator.user_errors import UsageError
from shared_base.check_result import CheckResult


def _runs_no_check(command: str, workspace: Path) -> CheckResult:
    """The assessment asks the guard which checks it would re-run; it never runs one."""
    raise RuntimeError(f"the assessment runs no check (asked to run {command!r} in {workspace})")


def guard_without_checks(spec: FeatureSpec, state: RunState, config: RunConfig) -> RegressionGuard:
    """The regression guard as the run would build it, able to say which checks it would re-run only."""
    return RegressionGuard(spec, state, mode=config.regression, concurrency=1, runner=_runs_no_check)


def assessment_now(feature: Feature, spec: FeatureSpec, state: RunState, config: RunConfig) -> Assessment:
    """The Checkpoint Agent's assessment of `feature` as the state stands (`orchestrator.run.checks.assessment`)."""
    return assess(feature, spec, state, guard_without_checks(spec, state, config))


def first_attempt_view(paths: ProjectPaths, config: RunConfig, loaded: LoadedSpec) -> AttemptView:
    """What a first attempt is shown of the workspace (`## Workspace`), as a run here would show it;
    nothing where a run could not start its sandbox (the run would say so)."""
    try:
        environment = command_environment(config, paths.root, loaded.path, lambda _warning: None,
                                          checks=spec_checks(loaded.spec))
    except UsageError:  # no sandbox here, or a check names a private file: the run would stop and say so
        return NO_VIEW
    return AttemptView(workspace=workspace_section(environment))


def next_attempt_view(first: AttemptView, paths: ProjectPaths, retrying: bool, report: AgentReport | None) -> AttemptView:
    """`first`, with a retry's note when the next attempt is a retry (`feature_job`'s own note)."""
    if not retrying:
        return first
    return AttemptView(retry=retry_note(paths.root, report), workspace=first.workspace)


def files_known(
    feature: Feature, spec: FeatureSpec, paths: ProjectPaths, entry: FeatureState | None, assessment: Assessment,
) -> frozenset[str]:
    """What the feature job would take the feature to touch (`context_view.known_files`)."""
    return known_files(paths.root, spec.check_command(feature), entry, assessment.predicted_footprint)
