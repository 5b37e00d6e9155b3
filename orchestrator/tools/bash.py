"""The bash tool (`bash_20250124`): one command, in the project directory, with limits.

Each command runs in a fresh `bash -c` (no state such as `cd` or variables carries over, so
`restart` has nothing to reset), in its own process group and session, with stdin from
/dev/null so nothing can wait for a keyboard. When the command returns, times out, or the
orchestrator is interrupted, the whole process group is stopped, and so is every process the
command started that left the group (`setsid`, daemons): nothing the agent starts outlives its
command (a background server must be started and used within one command).

A non-zero exit status is information for the model, not a tool failure; a refusal by the
shell policy or a timeout is an error result.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from orchestrator.json_types import ToolInput
from orchestrator.safety.credentials.secrets import known_secret_values
from orchestrator.safety.processes.process_group import run_in_group
from orchestrator.spec.fields import command_fault
from orchestrator.tools.context import Tool, ToolContext, ToolError, ToolInputError, ToolResult
from orchestrator.tools.truncation import join_head_tail

if TYPE_CHECKING:  # the SDK takes seconds to import; its types are for the checker only
    from anthropic.types import ToolBash20250124Param

TOOL_NAME: Final = "bash"
# Linux refuses a single argument over 128 KiB; say so plainly before exec does.
MAX_COMMAND_CHARS = 100_000
# Room left under the output cap for what is said around the output (the elision note, the exit
# code, a timeout or survivors): the result then fits the cap and is cut once, here, its note whole.
NOTES_ROOM = 600
RESTART_NOTE = (
    "Shell restarted. Note: every command already runs in a fresh bash process in the project "
    "directory, so nothing (cd, variables, background processes) carries over between commands."
)


@dataclass
class CommandOutcome:
    """What happened to one command."""

    output: str
    exit_code: int | None
    timed_out: bool
    survivors: list[int] = field(default_factory=list)


def run_bash(tool_input: ToolInput, ctx: ToolContext) -> ToolResult:
    """Check `tool_input["command"]` against the policy, run it, and describe the outcome."""
    if tool_input.get("restart"):
        extra = "" if tool_input.get("command") is None else " The command sent with it was not run; send it again."
        return ToolResult(RESTART_NOTE + extra)
    command = tool_input.get("command")
    command = command if isinstance(command, str) else ""
    fault = command_fault(command, MAX_COMMAND_CHARS)
    if fault == "blank":
        raise ToolInputError("command is required: the bash command to run (or restart: true)")
    if fault == "nul":
        raise ToolInputError("command contains a NUL byte")
    if fault == "too_long":
        raise ToolInputError(
            f"command is too long ({len(command)} characters, limit {MAX_COMMAND_CHARS}); write large files "
            "with str_replace_based_edit_tool create, then run them"
        )
    refusal = ctx.policy.refusal(command)
    if refusal:
        raise ToolError(refusal)
    outcome = run_command(command, ctx)
    if outcome.timed_out:
        return ToolResult(
            f"the command timed out after {ctx.bash_timeout:g} s and was stopped together with every process "
            f"it started; make it faster or split it into smaller steps. Output so far:\n{outcome.output}",
            is_error=True,
        )
    text = outcome.output
    if outcome.exit_code:
        text = f"{text}\n\n{_describe_exit(outcome.exit_code)}" if text else _describe_exit(outcome.exit_code)
    if outcome.survivors:
        note = _describe_survivors(outcome.survivors)
        text = f"{text}\n\n{note}" if text else note
    return ToolResult(text or "(no output)")


def agent_environment(ctx: ToolContext) -> dict[str, str]:
    """The environment of the agent's commands: scrubbed of secrets, marked as the agent's."""
    base = ctx.environment.variables
    # Even a caller-supplied environment never carries the orchestrator's own credentials.
    secrets = known_secret_values()
    env = {
        name: value
        for name, value in base.items()
        if not name.upper().startswith("ANTHROPIC_") and not any(s in value for s in secrets)
    }
    env["ORCHESTRATE_AGENT"] = "1"
    # Nothing may wait for a terminal that is not there.
    env.setdefault("GIT_TERMINAL_PROMPT", "0")
    env.setdefault("PAGER", "cat")
    env.setdefault("GIT_PAGER", "cat")
    return env


def run_command(command: str, ctx: ToolContext) -> CommandOutcome:
    """Run `command` with `bash -c` under the context's limits; kill its process group when done."""
    capture = _Capture(ctx.output_cap)
    try:
        finished = run_in_group(
            command, ctx.environment.with_variables(agent_environment(ctx)), timeout=ctx.bash_timeout,
            on_output=capture.add,
        )
    except OSError as err:
        raise ToolError(f"could not start bash: {(err.strerror or str(err)).lower()}") from None
    return CommandOutcome(
        output=capture.text(max(ctx.output_cap - NOTES_ROOM, ctx.output_cap // 2)),
        exit_code=finished.exit_code,
        timed_out=finished.timed_out,
        survivors=finished.survivors,
    )


class _Capture:
    """The first and last `limit` bytes of a stream, and how many bytes fell between them."""

    def __init__(self, limit: int) -> None:
        self.limit = max(limit, 1)
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        room = self.limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            excess = len(self.tail) - self.limit
            if excess > 0:
                del self.tail[:excess]
                self.dropped += excess

    def text(self, limit: int) -> str:
        head = self.head.decode("utf-8", errors="replace")
        tail = self.tail.decode("utf-8", errors="replace")
        hint = "narrow the command (grep, head, tail, -q) to see less at once"
        return join_head_tail(head, tail, limit, dropped=self.dropped, hint=hint).rstrip("\n")


def _describe_exit(code: int) -> str:
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"[exit: killed by {name}]"
    return f"[exit code {code}]"


def _describe_survivors(pids: list[int]) -> str:
    listed = ", ".join(str(pid) for pid in pids[:10]) + (", ..." if len(pids) > 10 else "")
    return f"[warning: {len(pids)} process(es) the command started could not be stopped: pid {listed}]"


def _definition() -> ToolBash20250124Param:
    # Anthropic-defined and schema-less: the model knows the inputs, the API fixes the name.
    return {"type": "bash_20250124", "name": TOOL_NAME}


def _summary(tool_input: ToolInput) -> str:
    return str(tool_input.get("command", ""))


TOOL = Tool(TOOL_NAME, _definition, run_bash, _summary)
