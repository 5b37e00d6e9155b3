"""Command environments for unit tests that run commands directly, outside any run.

A run builds its one `CommandEnvironment` from the configured sandbox; a unit test of the
process group, a check or a tool names its own, explicitly: here, no sandbox, and the test's
environment variables (the autouse fixture already removed the key and pointed HOME elsewhere).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from orchestrator.safety.bubblewrap.sandbox import NO_SANDBOX, Sandbox
from orchestrator.safety.environment import CommandEnvironment


def unsandboxed(workspace: Path, variables: Mapping[str, str] | None = None) -> CommandEnvironment:
    """Commands in `workspace`, no sandbox, `variables` (default: this process's environment)."""
    return CommandEnvironment(Path(workspace), NO_SANDBOX, dict(os.environ) if variables is None else variables)


def sandboxed(workspace: Path, sandbox: Sandbox, variables: Mapping[str, str] | None = None) -> CommandEnvironment:
    """Commands in `workspace` inside `sandbox`."""
    return CommandEnvironment(Path(workspace), sandbox, dict(os.environ) if variables is None else variables)
