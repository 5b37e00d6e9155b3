"""Run one shell command in a process group of its own, and leave nothing of it running.

The agent's `bash` tool and the feature checks both run `bash -c COMMAND` this way: stdin
from /dev/null (nothing may wait for a keyboard), stdout and stderr merged and handed over
chunk by chunk as they come, a deadline, and afterwards, or on any exception (a Ctrl-C
included), the whole group is stopped, so that test runners, servers and `sleep &` started by
the command do not outlive it. Processes that left the group (`setsid`, daemons) are found
and stopped too (`descendants.py`).

Ctrl-C and SIGTERM are held back while the command starts and while it is being stopped: a
signal raised inside `subprocess.Popen` would leave a started command that nothing knows of,
and one raised during the stop would leave it half done. A held signal is acted on as soon as
the command is accounted for.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from orchestrator.safety.environment import CommandEnvironment
from orchestrator.safety.processes.descendants import CommandProcesses

READ_SIZE = 65536
# How long output may keep coming after the shell exits (a background child holding the pipe).
DRAIN_GRACE = 0.5
# How long a stopped group gets to exit after SIGTERM before SIGKILL.
TERM_GRACE = 1.0
_HELD_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@dataclass
class Finished:
    """How the command ended: `exit_code` is None when it was stopped at its deadline."""

    exit_code: int | None
    survivors: list[int] = field(default_factory=list)
    """Processes the command started that could not be stopped (another user's, say)."""

    @property
    def timed_out(self) -> bool:
        return self.exit_code is None


def run_in_group(
    command: str, environment: CommandEnvironment, *, timeout: float, on_output: Callable[[bytes], None],
) -> Finished:
    """Run `command` with `bash -c` in `environment`: its workspace, its sandbox, its variables only.
    Raises OSError if it cannot start."""
    processes: CommandProcesses | None = None
    proc: subprocess.Popen[bytes] | None = None
    try:
        with held_signals():
            processes = CommandProcesses()
            proc = subprocess.Popen(
                environment.argv(command),
                cwd=environment.workspace,
                env=processes.environment(environment.variables),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # the shell leads a new group: its pid is the group id
            )
        # A signal held during the start is raised here, with `proc` known.
        finished = _read_until_exit(proc, on_output, deadline=time.monotonic() + timeout)
        # Whatever the command left running in the background goes with it.
        with held_signals():
            survivors = _stop_everything(proc, processes)
    except BaseException as exc:
        # A second Ctrl-C must not cut the clean-up short; the first is already on its way.
        if processes is not None:
            with held_signals(act_on_them=not isinstance(exc, KeyboardInterrupt)):
                _stop_everything(proc, processes)
        raise
    finally:
        if proc is not None and proc.stdout is not None:
            proc.stdout.close()
    return Finished(proc.returncode if finished else None, survivors)


def _stop_everything(proc: subprocess.Popen[bytes] | None, processes: CommandProcesses) -> list[int]:
    """Stop the command's group, then whatever left the group; the pids that would not stop."""
    if proc is not None:
        stop_group(proc)
    return processes.stop_leftovers(grace=TERM_GRACE, owned_pid=proc.pid if proc is not None else None)


@contextlib.contextmanager
def held_signals(*, act_on_them: bool = True) -> Iterator[None]:
    """Hold SIGINT and SIGTERM back for the duration; then act on the first one that came.

    Python handlers are swapped rather than the signal mask blocked: children inherit a
    blocked mask, and a command that cannot get SIGTERM could not be stopped gently. Outside
    the main thread nothing needs holding (Python runs handlers in the main thread only).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous: dict[int, Any] = {}

    def hold(signum: int, _frame: Any) -> None:
        caught.append(signum)

    try:
        for sig in _HELD_SIGNALS:
            handler = signal.getsignal(sig)
            if callable(handler):  # only Python handlers raise inside us; SIG_DFL/SIG_IGN act alone
                previous[sig] = signal.signal(sig, hold)
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        if caught and act_on_them:
            previous[caught[0]](caught[0], None)


def _read_until_exit(proc: subprocess.Popen[bytes], on_output: Callable[[bytes], None], *, deadline: float) -> bool:
    """Hand the output to `on_output` until the command exits; False if the deadline passed first."""
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
            if exited_at is not None and now - exited_at >= DRAIN_GRACE:
                return True  # the shell is gone; a background child still holds the pipe
            wait = min(deadline - now, DRAIN_GRACE if exited_at is not None else 0.25)
            if selector.select(wait):
                chunk = os.read(fd, READ_SIZE)
                if not chunk:
                    break
                on_output(chunk)
    # End of output does not mean the shell has exited (it may have closed its stdout).
    try:
        proc.wait(timeout=max(deadline - time.monotonic(), 0))
    except subprocess.TimeoutExpired:
        return False
    return True


def stop_group(proc: subprocess.Popen[bytes]) -> None:
    """Stop every process in the command's group: SIGTERM, a short grace, then SIGKILL."""
    pgid = proc.pid
    if not _signal_group(pgid, signal.SIGTERM):
        _reap(proc)
        return
    end = time.monotonic() + TERM_GRACE
    while time.monotonic() < end:
        _reap(proc, timeout=0.05)
        if not _group_alive(pgid):
            return
    _signal_group(pgid, signal.SIGKILL)
    _reap(proc, timeout=TERM_GRACE)


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
