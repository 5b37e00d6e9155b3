"""The bash tool (`bash_20250124`): one command, in the project directory, with limits.

Each command runs in a fresh `bash -c` (no state such as `cd` or variables carries over, so
`restart` has nothing to reset), in its own process group and session, with stdin from
/dev/null so nothing can wait for a keyboard. When the command returns, times out, or the
orchestrator is interrupted, the whole process group is stopped: nothing the agent starts
outlives its command (a background server must be started and used within one command).

A non-zero exit status is information for the model, not a tool failure; a refusal by the
shell policy or a timeout is an error result.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass
from typing import Any

from orchestrator.secrets import known_secret_values, scrubbed_environment
from orchestrator.tools.context import ToolContext, ToolError, ToolInputError, ToolResult
from orchestrator.tools.truncation import join_head_tail

TOOL_NAME = "bash"
# Linux refuses a single argument over 128 KiB; say so plainly before exec does.
MAX_COMMAND_CHARS = 100_000
RESTART_NOTE = (
    "Shell restarted. Note: every command already runs in a fresh bash process in the project "
    "directory, so nothing (cd, variables, background processes) carries over between commands."
)
_READ_SIZE = 65536
# How long output may keep coming after the shell exits (a background child holding the pipe).
_DRAIN_GRACE = 0.5
# How long a stopped process group gets to exit after SIGTERM before SIGKILL.
_TERM_GRACE = 1.0


@dataclass
class CommandOutcome:
    """What happened to one command."""

    output: str
    exit_code: int | None
    timed_out: bool


def run_bash(tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
    """Check `tool_input["command"]` against the policy, run it, and describe the outcome."""
    if tool_input.get("restart"):
        extra = "" if tool_input.get("command") is None else " The command sent with it was not run; send it again."
        return ToolResult(RESTART_NOTE + extra)
    command = tool_input.get("command")
    if not isinstance(command, str) or not command.strip():
        raise ToolInputError("command is required: the bash command to run (or restart: true)")
    if "\x00" in command:
        raise ToolInputError("command contains a NUL byte")
    if len(command) > MAX_COMMAND_CHARS:
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
    return ToolResult(text or "(no output)")


def agent_environment(ctx: ToolContext) -> dict[str, str]:
    """The environment of the agent's commands: scrubbed of secrets, marked as the agent's."""
    base = scrubbed_environment() if ctx.env is None else dict(ctx.env)
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
    try:
        proc = subprocess.Popen(
            ["bash", "-c", command],
            cwd=ctx.project_root,
            env=agent_environment(ctx),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as err:
        raise ToolError(f"could not start bash: {(err.strerror or str(err)).lower()}") from None
    capture = _Capture(ctx.output_cap)
    try:
        finished = _pump(proc, capture, deadline=time.monotonic() + ctx.bash_timeout)
    except BaseException:
        # KeyboardInterrupt included: the command must not outlive the orchestrator's attention.
        _kill_group(proc)
        raise
    finally:
        assert proc.stdout is not None
        proc.stdout.close()
    # Whatever the command left running in the background goes with it.
    _kill_group(proc)
    return CommandOutcome(
        output=capture.text(ctx.output_cap),
        exit_code=proc.returncode if finished else None,
        timed_out=not finished,
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


def _pump(proc: subprocess.Popen[bytes], capture: _Capture, *, deadline: float) -> bool:
    """Read the command's output until it exits; False if the deadline passed first."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    exited_at: float | None = None
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            now = time.monotonic()
            if now >= deadline:
                return False
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at >= _DRAIN_GRACE:
                return True  # The shell is gone; a background child still holds the pipe.
            wait = min(deadline - now, _DRAIN_GRACE if exited_at is not None else 0.25)
            if selector.select(wait):
                chunk = os.read(fd, _READ_SIZE)
                if not chunk:
                    break
                capture.add(chunk)
    # End of output does not mean the shell has exited (it may have closed its stdout).
    try:
        proc.wait(timeout=max(deadline - time.monotonic(), 0))
    except subprocess.TimeoutExpired:
        return False
    return True


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Stop every process in the command's group: SIGTERM, a short grace, then SIGKILL."""
    pgid = proc.pid  # start_new_session made the shell the leader of a new group
    if not _signal_group(pgid, signal.SIGTERM):
        _reap(proc)
        return
    end = time.monotonic() + _TERM_GRACE
    while time.monotonic() < end:
        _reap(proc, timeout=0.05)
        if not _group_alive(pgid):
            return
    _signal_group(pgid, signal.SIGKILL)
    _reap(proc, timeout=_TERM_GRACE)


def _signal_group(pgid: int, sig: int) -> bool:
    """Send `sig` to the group; False if the group no longer exists."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        # A member changed its credentials (setuid); we cannot signal it and must not hang.
        return False
    return True


def _group_alive(pgid: int) -> bool:
    """True while a member of the group still runs (zombies waiting to be reaped do not count)."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    # Orphaned members are reaped by init; where init does not reap (some containers), their
    # zombies would keep the group "alive" forever. /proc tells them apart on Linux.
    try:
        entries = os.listdir("/proc")
    except OSError:
        return True
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                state, _ppid, group = handle.read().rsplit(b")", 1)[1].split()[:3]
            if int(group) == pgid and state not in (b"Z", b"X"):
                return True
        except (OSError, ValueError):
            continue
    return False


def _reap(proc: subprocess.Popen[bytes], timeout: float = 0.0) -> None:
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        pass


def _describe_exit(code: int) -> str:
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"[exit: killed by {name}]"
    return f"[exit code {code}]"
