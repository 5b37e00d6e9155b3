"""Run one shell command in a process group of its own, and leave nothing of it running.

The agent's `bash` tool and the feature checks both run `bash -c COMMAND` this way: stdin
from /dev/null (nothing may wait for a keyboard), stdout and stderr merged and handed over
chunk by chunk as they come, a deadline, and afterwards, or on any exception (a Ctrl-C
included), the whole group is stopped, so that test runners, servers and `sleep &` started by
the command do not outlive it.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

READ_SIZE = 65536
# How long output may keep coming after the shell exits (a background child holding the pipe).
DRAIN_GRACE = 0.5
# How long a stopped group gets to exit after SIGTERM before SIGKILL.
TERM_GRACE = 1.0


@dataclass
class Finished:
    """How the command ended: `exit_code` is None when it was stopped at its deadline."""

    exit_code: int | None

    @property
    def timed_out(self) -> bool:
        return self.exit_code is None


def run_in_group(
    command: str, cwd: Path, env: Mapping[str, str] | None, *, timeout: float, on_output: Callable[[bytes], None]
) -> Finished:
    """Run `command` with `bash -c` in `cwd`; `env` None inherits ours. Raises OSError if it cannot start."""
    proc = subprocess.Popen(
        ["bash", "-c", command],
        cwd=cwd,
        env=dict(env) if env is not None else None,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # the shell leads a new group: its pid is the group id
    )
    try:
        finished = _read_until_exit(proc, on_output, deadline=time.monotonic() + timeout)
    except BaseException:
        stop_group(proc)
        raise
    finally:
        assert proc.stdout is not None
        proc.stdout.close()
    # Whatever the command left running in the background goes with it.
    stop_group(proc)
    return Finished(proc.returncode if finished else None)


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
