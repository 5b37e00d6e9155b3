"""Every process a command started, found and stopped, even those that left its process group.

Killing a command's process group misses whatever left it: `setsid sleep 1000 &`, a daemon's
double fork. On Linux two things find those processes anyway:

- a marker: each command runs with `ORCHESTRATE_CMD_ID=<uuid>` in its environment, which its
  descendants inherit (unless they clear their environment), and `/proc/<pid>/environ` shows;
- the subreaper: this process asks the kernel (`PR_SET_CHILD_SUBREAPER`) to adopt orphaned
  descendants, so a process whose parent died becomes our child instead of init's. A child
  we adopted while the command ran, in a session other than ours, came from that command.

What those processes started goes with them (found by parent pid). They get SIGTERM, a grace,
then SIGSTOP and SIGKILL (stopped first, so nothing forks while we kill), and we look again
until none is left. Zombies we adopted are reaped. Where there is no `/proc`, nothing is found
and only the process group is stopped.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

MARKER_VAR = "ORCHESTRATE_CMD_ID"
_PR_SET_CHILD_SUBREAPER = 36
# How often the process table is read again while waiting for processes to go.
_POLL = 0.05
# Rounds of SIGSTOP+SIGKILL before giving up on a process (another user's, one stuck in the kernel).
_KILL_ROUNDS = 20

_subreaper: bool | None = None
# Markers of the commands running in this process right now. Adopted orphans can only be
# told apart by command when one command runs at a time.
_active: set[str] = set()
# Set when other threads start children of their own at any moment (`--jobs N`): then a child
# outside our session may be theirs (a git, another worker's check), so only markers count.
_concurrent = False


def commands_run_concurrently() -> None:
    """Tell this module that several threads start processes at once (for the rest of the process)."""
    global _concurrent
    _concurrent = True


def become_subreaper() -> bool:
    """Have orphaned descendants reparented to this process (Linux); False where unsupported.

    Idempotent. Afterwards this process must reap what it adopts (`CommandProcesses` does).
    """
    global _subreaper
    if _subreaper is None:
        _subreaper = _set_child_subreaper()
    return _subreaper


def _set_child_subreaper() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


@dataclass(frozen=True)
class _Process:
    pid: int
    ppid: int
    session: int
    zombie: bool


class CommandProcesses:
    """The processes of one command: marks its environment, then stops whatever it left running."""

    def __init__(self) -> None:
        become_subreaper()
        self.marker = uuid.uuid4().hex
        self._me = os.getpid()
        self._my_session = os.getsid(0)
        table = _process_table()
        # Children we had before the command are not the command's.
        self._children_before = {p.pid for p in (table or {}).values() if p.ppid == self._me}
        _active.add(self.marker)

    def environment(self, env: Mapping[str, str] | None) -> dict[str, str]:
        """`env` (None: ours) with the command's marker added."""
        marked = dict(os.environ if env is None else env)
        marked[MARKER_VAR] = self.marker
        return marked

    def stop_leftovers(self, *, grace: float, owned_pid: int | None = None) -> list[int]:
        """Stop every process the command left running; return the pids that could not be stopped.

        `owned_pid` (the command's shell, waited for by its `Popen`) is never reaped here.
        """
        try:
            return self._stop(grace, owned_pid)
        finally:
            _active.discard(self.marker)

    def _stop(self, grace: float, owned_pid: int | None) -> list[int]:
        left = self._left_running(owned_pid)
        if not left:
            return []
        _signal_all(left, signal.SIGTERM)
        end = time.monotonic() + grace
        while left and time.monotonic() < end:
            time.sleep(_POLL)
            left = self._left_running(owned_pid)
        for _ in range(_KILL_ROUNDS):
            if not left:
                break
            _signal_all(left, signal.SIGSTOP)
            _signal_all(left, signal.SIGKILL)
            time.sleep(_POLL / 5)
            left = self._left_running(owned_pid)
        return sorted(left)

    def _left_running(self, owned_pid: int | None) -> set[int]:
        """Reap the command's zombies, then find its processes still running."""
        table = _process_table()
        if table is None:
            return set()
        adopted = self._adopted(table, owned_pid)
        self._reap(table, adopted | self._orphaned_zombies(table))
        roots = adopted | {p.pid for p in table.values() if p.pid != self._me and self._is_marked(p.pid)}
        found = _with_descendants(table, roots) - {self._me}
        return {pid for pid in found if pid in table and not table[pid].zombie}

    def _adopted(self, table: Mapping[int, _Process], owned_pid: int | None) -> set[int]:
        """Our children that came from the command: adopted while it ran, outside our session."""
        if len(_active) > 1 or _concurrent:
            return set()  # another command (or thread) runs too: its shell and orphans look the same
        return {
            p.pid for p in table.values()
            if p.ppid == self._me and p.session != self._my_session
            and p.pid not in self._children_before and p.pid != owned_pid
        }

    def _orphaned_zombies(self, table: Mapping[int, _Process]) -> set[int]:
        """Dead children of ours that no `Popen` of ours can be waiting for, whatever runs at once.

        A process this one started is in our session or, if it called `setsid` (as every command
        shell does), leads its own; a child in another process's session was adopted (a sandbox's
        inner process whose `bwrap` exited first). Under `--jobs N` nothing else reaps those, and
        every check left one: the process table that each command's clean-up reads grew with the
        run (570 zombies after 100 features), and so did every feature's cost."""
        return {
            p.pid for p in table.values()
            if p.zombie and p.ppid == self._me and p.session not in (self._my_session, p.pid)
        }

    def _reap(self, table: Mapping[int, _Process], adopted: Iterable[int]) -> None:
        for pid in adopted:
            if table[pid].zombie:
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, os.WNOHANG)

    def _is_marked(self, pid: int) -> bool:
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                environ = handle.read()
        except OSError:
            return False  # gone, or another user's
        return b"\0" + f"{MARKER_VAR}={self.marker}".encode() + b"\0" in b"\0" + environ


def _process_table() -> dict[int, _Process] | None:
    """Every process on the machine, from /proc; None where there is no /proc."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return None
    table: dict[int, _Process] = {}
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                # The command name, in parentheses, may hold spaces: split after its last ')'.
                fields = handle.read().rsplit(b")", 1)[1].split()
            state, ppid, session = fields[0], int(fields[1]), int(fields[3])
        except (OSError, ValueError, IndexError):
            continue  # it exited while we looked
        table[int(entry)] = _Process(int(entry), ppid, session, state in (b"Z", b"X"))
    return table


def _with_descendants(table: Mapping[int, _Process], roots: Iterable[int]) -> set[int]:
    children: dict[int, list[int]] = {}
    for process in table.values():
        children.setdefault(process.ppid, []).append(process.pid)
    found: set[int] = set()
    pending = list(roots)
    while pending:
        pid = pending.pop()
        if pid not in found:
            found.add(pid)
            pending.extend(children.get(pid, ()))
    return found


def _signal_all(pids: Iterable[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)
