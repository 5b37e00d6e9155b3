"""The sandbox and the variables a project's settings give the commands the model causes, from
plain values: what `run`, `plan`, `validate --run-checks`, `verify`, `combine` and `doctor`
share. `orchestrator.run.config_sandbox` reads them from the run's config and adds the files the
checks read outside the project.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from orchestrator.safety.bubblewrap.sandbox import Sandbox, choose_sandbox
from orchestrator.safety.credentials.secrets import scrubbed_environment
from orchestrator.safety.environment import CommandEnvironment


def project_sandbox(
    mode: str, project_root: Path, *, read: Iterable[str] = (), write: Iterable[str] = (), network: bool = False,
    allow_hosts: Iterable[str] = (), spec: Path | None = None,
) -> Sandbox:
    """The sandbox `mode` gives in this project (`[sandbox]`'s `read`, `write`, `network` and
    `allow_hosts`); raises `SandboxUnavailable` for a `bwrap` that cannot run. The spec and its
    directory stay readable: checks may run tests kept beside it."""
    also_read = [spec.resolve().parent, spec.resolve()] if spec is not None else []
    return choose_sandbox(
        mode, project_root, read=read, write=write, network=network, allow_hosts=allow_hosts, also_read=also_read,
    )


def showing(sandbox: Sandbox, paths: Sequence[Path]) -> Sandbox:
    """`sandbox` with `paths` visible read-only as well (the files checks read outside the project)."""
    return replace(sandbox, read=(*sandbox.read, *paths)) if paths else sandbox


def check_variables(spec: Path, secret_patterns: Sequence[str]) -> dict[str, str]:
    """Environment for checks and the agent's shell: no secrets (the default patterns and
    `secret_patterns`), plus where the spec lives (specs may ship their checks beside them:
    `pytest $ORCHESTRATE_SPEC_DIR/tests`)."""
    env = scrubbed_environment(extra_patterns=secret_patterns)
    env["ORCHESTRATE_SPEC_DIR"] = str(spec.parent.resolve())
    return env


def project_environment(
    project_root: Path, sandbox: Sandbox, variables: Mapping[str, str], on_warning: Callable[[str], None],
) -> CommandEnvironment:
    """The one environment of every command the model causes in this project, built once per
    command line: `sandbox` (`on_warning` hears when `auto` found none) and the `variables`."""
    if sandbox.warning:
        on_warning(sandbox.warning)
    return CommandEnvironment(project_root, sandbox, variables)
