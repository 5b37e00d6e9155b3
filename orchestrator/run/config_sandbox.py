"""The sandbox and command environment a run's config asks for: `orchestrator.safety.sandbox_setting`
given the config's values and showing the files the checks read outside the project.

Kept apart from `orchestrator.run.factory` because that one brings in the model client (seconds
of start-up for the commands that only run checks).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from orchestrator.config import RunConfig
from orchestrator.run.checks.protection.outside_reads import CheckCommands, reads_to_show
from orchestrator.safety.bubblewrap.sandbox import Sandbox
from orchestrator.safety.environment import CommandEnvironment
from orchestrator.safety.sandbox_setting import check_variables, project_environment, project_sandbox, showing


def sandbox_for(config: RunConfig, project_root: Path, spec: Path | None = None, checks: CheckCommands = ()) -> Sandbox:
    """The sandbox `config` asks for in this project (`project_sandbox`), showing the files
    `checks` name outside the project (`outside_reads`: a `UsageError` for one the sandbox keeps
    private)."""
    options = config.sandbox_options
    sandbox = project_sandbox(
        config.sandbox, project_root, read=options.read, write=options.write, network=options.network,
        allow_hosts=options.allow_hosts, spec=spec,
    )
    return showing(sandbox, reads_to_show(sandbox, project_root, checks))


def command_environment(
    config: RunConfig, project_root: Path, spec: Path, on_warning: Callable[[str], None], *, checks: CheckCommands,
) -> CommandEnvironment:
    """The one environment of every command the model causes in this project (`project_environment`):
    the sandbox `config` asks for (`SandboxUnavailable`, exit 2, when `bwrap` cannot run), showing
    the files `checks` read outside the project, and the variables without secrets."""
    sandbox = sandbox_for(config, project_root, spec, checks)
    variables = check_variables(spec, config.security.secret_env_patterns)
    return project_environment(project_root, sandbox, variables, on_warning)
