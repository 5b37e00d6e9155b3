"""What every tool is (`Tool`), receives (`ToolContext`), returns (`ToolResult`) and raises (`ToolError`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from orchestrator.json_types import ToolInput
from orchestrator.safety.environment import CommandEnvironment
from orchestrator.tools.shell_policy import ShellPolicy
from orchestrator.user_errors import OrchestrateError

if TYPE_CHECKING:  # the SDK takes seconds to import; its types are for the checker only
    from anthropic.types import ToolUnionParam


class ToolError(OrchestrateError):
    """A tool call that cannot be carried out; its message goes to the model as an error result.

    Messages are one or two plain sentences saying what was wrong and what to do instead;
    they never carry a traceback.
    """


class ToolInputError(ToolError, ValueError):
    """The input the model sent does not fit the tool (missing field, wrong type, bad value)."""


@dataclass(frozen=True)
class ToolContext:
    """Where and how the agent's tools run during one attempt."""

    environment: CommandEnvironment
    """Where bash commands run: the project directory (resolved; tools never read or write
    outside it), the sandbox, the variables the agent's shell may start from."""
    protected: frozenset[Path] = frozenset()
    """Resolved absolute paths of the feature's check files: the agent may not change them."""
    bash_timeout: float = 120.0
    """Seconds one bash command may run before its whole process group is killed."""
    output_cap: int = 30_000
    """Characters of tool output returned to the model; the middle of longer output is elided."""
    policy: ShellPolicy = field(default_factory=ShellPolicy.default)
    """Deny-list checked before every bash command."""

    def __post_init__(self) -> None:
        # Confinement compares resolved paths; an unresolved root would make every check wrong.
        workspace = Path(self.environment.workspace).resolve()
        object.__setattr__(self, "environment", self.environment.at(workspace))
        object.__setattr__(self, "protected", frozenset(Path(p).resolve() for p in self.protected))

    @property
    def project_root(self) -> Path:
        """The project directory, resolved. Tools never read or write outside it."""
        return self.environment.workspace


@dataclass(frozen=True)
class ToolResult:
    """The text returned to the model as a `tool_result` block."""

    content: str
    is_error: bool = False


# The model's input to a tool and a tool's definition for the API are JSON objects whose shape
# each tool checks for itself: genuinely free-form here.


@dataclass(frozen=True)
class Tool:
    """One tool the agent can call: all a new tool supplies, registered once in `registry.TOOLS`."""

    name: str
    """The name the model calls it by (fixed by the API for Anthropic-defined tools)."""
    definition: Callable[[], ToolUnionParam]
    """A fresh copy of the tool param sent with every request (the SDK's type for it)."""
    handler: Callable[[ToolInput, ToolContext], ToolResult]
    """Runs one call; raises ToolError for anything the model must fix."""
    summary: Callable[[ToolInput], str]
    """A short line for the event log saying what a call does (redacted, capped by the caller)."""
    elision_hint: str = ""
    """What to tell the model when the middle of long output is cut."""
