"""One run at a time per project: a lock file that names its owner.

The lock file (`.autonomous/state/run.lock`) holds JSON `{"pid", "host", "startedAt", "runId"}`.
A lock whose owner is no longer running (a crash, a SIGKILL, a reboot) is stale and is taken
over with a warning; a lock held by a live process stops the second run with `LockHeld`.

Checking a lock and taking it over is serialized with `flock` on the lock's directory, so when
two runs find the same stale lock exactly one of them wins. The kernel drops that guard when
its holder dies, so the guard itself can never go stale.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from orchestrator.store.disk.no_follow import read_no_follow
from orchestrator.user_errors import OrchestrateError
from shared_base.files import LinkRefused

# A lock file is one short line of JSON; anything longer is not a lock we wrote.
_MAX_LOCK_BYTES = 4096
# How far a process's start time (known to about a second) may lie after the lock's
# `startedAt` before we conclude that the pid was reused by an unrelated process.
_PID_REUSE_SLACK_MS = 2000


class LockOwner(BaseModel):
    """The contents of a lock file: who holds the run lock."""

    model_config = ConfigDict(populate_by_name=True)

    pid: int = Field(gt=0)
    host: str = ""
    started_at: int = Field(default=0, alias="startedAt")
    """When the lock was taken, epoch milliseconds."""
    run_id: str | None = Field(default=None, alias="runId")


class LockHeld(OrchestrateError):
    """Another live run holds the project's lock."""

    def __init__(self, owner: LockOwner, lock_path: Path) -> None:
        self.pid = owner.pid
        self.owner = owner
        self.lock_path = lock_path
        where = "" if owner.host == socket.gethostname() else f" on host {owner.host}"
        super().__init__(
            f"another orchestrate run (pid {owner.pid}{where}) is working on this project. "
            f"Wait for it to finish, or, if you are sure it is no longer running, "
            f"remove {lock_path} and start again."
        )


class RunLock:
    """Context manager holding the project's run lock for the duration of a run."""

    def __init__(
        self,
        lock_path: Path,
        on_warning: Callable[[str], None] | None = None,
        *,
        run_id: str | None = None,
    ) -> None:
        self.lock_path = Path(lock_path)
        self._warn = on_warning or _warn_on_stderr
        self._run_id = run_id
        self._owner: LockOwner | None = None

    def acquire(self) -> None:
        """Take the lock, taking over a stale one; raise `LockHeld` if a live run has it."""
        if self._owner is not None:
            raise RuntimeError(f"{self.lock_path} is already held by this RunLock")
        self.lock_path.parent.mkdir(parents=True, exist_ok=True)
        owner = LockOwner(
            pid=os.getpid(),
            host=socket.gethostname(),
            started_at=int(time.time() * 1000),
            run_id=self._run_id,
        )
        with _guard(self.lock_path.parent):
            try:
                _create(self.lock_path, owner)
            except FileExistsError:
                self._take_over_if_stale()
                _create(self.lock_path, owner)
        self._owner = owner

    def release(self) -> None:
        """Remove the lock file, but only if it is still ours."""
        if self._owner is None:
            return
        with _guard(self.lock_path.parent):
            if read_owner(self.lock_path) == self._owner:
                with contextlib.suppress(FileNotFoundError):
                    self.lock_path.unlink()
        self._owner = None

    def _take_over_if_stale(self) -> None:
        current = read_owner(self.lock_path)
        if current is None:
            self._warn(f"taking over an unreadable lock file {self.lock_path}")
        elif _owner_running(current):
            raise LockHeld(current, self.lock_path)
        else:
            self._warn(f"taking over a stale lock left by pid {current.pid} (no longer running)")
        with contextlib.suppress(FileNotFoundError):
            self.lock_path.unlink()

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


def read_owner(lock_path: Path) -> LockOwner | None:
    """The lock's owner as recorded in the file; None if it is missing, empty or corrupt."""
    try:
        raw = read_no_follow(lock_path, _MAX_LOCK_BYTES)  # a link: LinkRefused, the command stops
        data: Any = json.loads(raw)
        return LockOwner.model_validate(data)
    except LinkRefused:
        raise
    except (OSError, ValueError, ValidationError, RecursionError):
        return None


def _create(lock_path: Path, owner: LockOwner) -> None:
    """Create the lock file exclusively; FileExistsError if it is already there."""
    data = json.dumps(owner.model_dump(by_alias=True)).encode()
    fd = os.open(lock_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        os.write(fd, data + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)


def _owner_running(owner: LockOwner) -> bool:
    """Whether the lock's owner may still be running (when in doubt, assume it is)."""
    if owner.host != socket.gethostname():
        return True  # a pid on another machine cannot be checked from here
    try:
        os.kill(owner.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # alive, owned by another user
    stat = _process_stat(owner.pid)
    if stat is None:
        return True
    state, start_ms = stat
    if state == "Z":
        return False  # killed, and its parent has not reaped it yet
    # A pid reused by an unrelated process (after a reboot, say) started after the lock did.
    return not owner.started_at or start_ms <= owner.started_at + _PID_REUSE_SLACK_MS


def _process_stat(pid: int) -> tuple[str, int] | None:
    """A process's state letter and start time (epoch ms) from /proc; None where unavailable."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        lines = Path("/proc/stat").read_text().splitlines()
        boot = next(line for line in lines if line.startswith("btime "))
        # Fields after the parenthesized command name: state is field 3, starttime field 22.
        fields = stat.rsplit(")", 1)[1].split()
        seconds = int(boot.split()[1]) + int(fields[19]) / os.sysconf("SC_CLK_TCK")
        return fields[0], int(seconds * 1000)
    except (OSError, ValueError, IndexError, StopIteration):
        return None


@contextlib.contextmanager
def _guard(directory: Path) -> Iterator[None]:
    """Serialize lock checks and takeovers among processes, via flock on the directory."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        yield  # best effort: without the guard only a simultaneous takeover can go wrong
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            pass  # a filesystem without flock: same best effort
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the flock


def _warn_on_stderr(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)
