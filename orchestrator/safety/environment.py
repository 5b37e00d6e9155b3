"""Where a command the model causes runs: the one object every such command goes through.

A `CommandEnvironment` is the workspace directory, the sandbox, the workspace's protected paths
and the environment variables a command may see. The agent's `bash` tool, a feature's check,
a re-check of the regression guard or final verification, a red check of `plan` or `validate
--run-checks`, a check of `verify` or `combine`: each receives one, built once where its run or
command is set up (`orchestrator.safety.sandbox_setting.project_environment`). No parameter
anywhere defaults to one, so a new mode cannot forget the sandbox: leaving it out is a type
error, not a silent unsandboxed command.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from orchestrator.safety.bubblewrap.sandbox import PROTECTED_NAMES, Sandbox
from orchestrator.safety.bubblewrap.stand_in import StandIn


@dataclass(frozen=True)
class CommandEnvironment:
    """The workspace, sandbox, protected paths and variables of the commands the model causes."""

    workspace: Path
    """The directory commands run in, writable in the sandbox (the project, or a worktree)."""
    sandbox: Sandbox
    """Bubblewrap, or none (`orchestrator.safety.bubblewrap.sandbox`)."""
    variables: Mapping[str, str] = field(repr=False)
    """All a command sees of the environment: no secrets (`orchestrator.safety.credentials.secrets`)."""
    stand_in: StandIn | None = None
    """A verification checkout shown in the sandbox where the live project is (the workspace lies in it)."""

    @property
    def protected(self) -> tuple[Path, ...]:
        """Paths of the workspace commands may read but never change: read-only in the sandbox,
        refused by the editor tool, checked after each attempt without one."""
        return tuple(self.workspace / name for name in PROTECTED_NAMES)

    def at(self, workspace: Path) -> CommandEnvironment:
        """The same sandbox and variables for another workspace (a worktree, a scratch tree)."""
        return replace(self, workspace=workspace)

    def standing_in(
        self, checkout: Path, live: Path, shared: tuple[tuple[Path, Path], ...] = ()
    ) -> CommandEnvironment:
        """The same sandbox and variables for commands in `checkout`, a verification checkout of the
        repository at `live`: inside the sandbox the checkout is where the live tree was, and the
        live tree is nowhere but the `shared` directories, read-only (`orchestrator.run.checks.clean_checkout`)."""
        return replace(self, stand_in=StandIn(checkout, live, shared))

    @property
    def seen_workspace(self) -> Path:
        """The workspace's path as its commands see it (in a stand-in, the live path)."""
        if self.stand_in is not None and self.sandbox.active:
            return self.stand_in.inside(self.workspace)
        return self.workspace

    def with_variables(self, variables: Mapping[str, str]) -> CommandEnvironment:
        """The same workspace and sandbox with `variables` instead (the agent's shell adds some)."""
        return replace(self, variables=variables)

    def argv(self, command: str) -> list[str]:
        """`bash -c command` as it runs here: inside the sandbox, in the workspace."""
        return self.sandbox.wrap(["bash", "-c", command], self.workspace, stand_in=self.stand_in)
