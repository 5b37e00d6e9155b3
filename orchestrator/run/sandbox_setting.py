"""The sandbox a project's settings ask for: what `run`, `verify`, `combine` and `doctor` share.

Kept apart from `orchestrator.run.factory` because that one brings in the model client (seconds
of start-up for the commands that only run checks).
"""

from __future__ import annotations

from pathlib import Path

from orchestrator.config import RunConfig
from orchestrator.safety.sandbox import Sandbox, choose_sandbox


def sandbox_for(config: RunConfig, project_root: Path, spec: Path | None = None) -> Sandbox:
    """The sandbox `config` asks for in this project; raises `SandboxUnavailable` for a `bwrap`
    that cannot run. The spec and its directory stay readable: checks may run tests kept beside it."""
    options = config.sandbox_options
    return choose_sandbox(
        config.sandbox, project_root, read=options.read, write=options.write, network=options.network,
        allow_hosts=options.allow_hosts,
        also_read=[spec.resolve().parent, spec.resolve()] if spec is not None else [],
    )
