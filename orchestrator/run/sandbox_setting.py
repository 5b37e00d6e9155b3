"""The environment a project's settings give the commands the model causes: what `run`, `plan`,
`validate --run-checks`, `verify`, `combine` and `doctor` share.

Kept apart from `orchestrator.run.factory` because that one brings in the model client (seconds
of start-up for the commands that only run checks).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from orchestrator.config import RunConfig
from orchestrator.run.checks.protection.outside_reads import CheckCommands, reads_to_show
from orchestrator.safety.bubblewrap.sandbox import Sandbox, choose_sandbox
from orchestrator.safety.credentials.secrets import scrubbed_environment
from orchestrator.safety.environment import CommandEnvironment


def sandbox_for(config: RunConfig, project_root: Path, spec: Path | None = None, checks: CheckCommands = ()) -> Sandbox:
    """The sandbox `config` asks for in this project; raises `SandboxUnavailable` for a `bwrap`
    that cannot run. The spec and its directory stay readable: checks may run tests kept beside it;
    so do the files `checks` name outside the project (`outside_reads`: a `UsageError` for one
    the sandbox keeps private)."""
    options = config.sandbox_options
    also_read = [spec.resolve().parent, spec.resolve()] if spec is not None else []
    sandbox = choose_sandbox(
        config.sandbox, project_root, read=options.read, write=options.write, network=options.network,
        allow_hosts=options.allow_hosts, also_read=also_read,
    )
    extra = reads_to_show(sandbox, project_root, checks)
    return replace(sandbox, read=(*sandbox.read, *extra)) if extra else sandbox


def check_variables(config: RunConfig, spec: Path) -> dict[str, str]:
    """Environment for checks and the agent's shell: no secrets, plus where the spec lives
    (specs may ship their checks beside them: `pytest $ORCHESTRATE_SPEC_DIR/tests`)."""
    env = scrubbed_environment(extra_patterns=config.security.secret_env_patterns)
    env["ORCHESTRATE_SPEC_DIR"] = str(spec.parent.resolve())
    return env


def command_environment(
    config: RunConfig, project_root: Path, spec: Path, on_warning: Callable[[str], None], *, checks: CheckCommands,
) -> CommandEnvironment:
    """The one environment of every command the model causes in this project, built once per
    command line: the sandbox `config` asks for (`SandboxUnavailable`, exit 2, when `bwrap` cannot
    run; `on_warning` hears when `auto` found none), showing the files `checks` read outside the
    project, and the variables without secrets."""
    sandbox = sandbox_for(config, project_root, spec, checks)
    if sandbox.warning:
        on_warning(sandbox.warning)
    return CommandEnvironment(project_root, sandbox, check_variables(config, spec))
