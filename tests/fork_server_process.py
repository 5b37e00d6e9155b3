"""The fork server's own process (`tests/fork_server.py` starts it; run as a script, so that the
`tests` package is not among the modules a CLI process inherits).

It imports what `orchestrate run` imports (the SDK alone is about a second of CPU), then waits.
For each request it forks a waiter, which forks the CLI process and reports that process's pid
and exit status; the CLI process takes the request's stdin/stdout/stderr, directory, umask,
environment and arguments (in /proc too: see `_become_cli`), and runs `orchestrator` as
`python -m orchestrator` would, to the interpreter's exit: threads joined, atexit handlers run,
output flushed, only the modules' teardown left out (`_leave_without_teardown`). Nothing else
is run here before the fork: every command's own work, and every import it makes lazily,
happens in the CLI process. Linux only (/proc/self/mem).
"""

from __future__ import annotations

import atexit
import importlib
import json
import os
import runpy
import select
import signal
import socket
import sys
import tempfile
import threading

# What `orchestrate run` imports before its first model call.
PRELOAD = (
    "orchestrator.cli.commands", "orchestrator.commands.run", "orchestrator.run.factory",
    "orchestrator.llm.client", "anthropic",
)


def _preload() -> None:
    # Can this process write its own argument and environment blocks (as the CLI processes
    # will)? Written back unchanged; a server that cannot do it does not start.
    for fields in (ARG_FIELDS, ENV_FIELDS):
        start, end = _exec_block(fields)
        with open("/proc/self/mem", "r+b", buffering=0) as mem:
            mem.seek(start)
            block = mem.read(end - start)
            mem.seek(start)
            mem.write(block)
    for name in PRELOAD:
        importlib.import_module(name)
    # What a fork would copy and a new process would not have: threads, or a cached temporary
    # directory (read from TMPDIR on first use, which must be the CLI's).
    if threading.active_count() != 1 or tempfile.tempdir is not None:
        sys.exit(f"fork server: importing {PRELOAD} started a thread or fixed the temporary directory")


def _serve(listener: socket.socket) -> tuple[socket.socket, dict, list[int]]:
    """Accept requests until the test process goes (its end of stdin closes); in a waiter, return
    the request it is to run."""
    while True:
        ready, _, _ = select.select([listener, sys.stdin], [], [])
        if sys.stdin in ready and not os.read(sys.stdin.fileno(), 1):
            os._exit(0)
        if listener not in ready:
            continue
        conn, _ = listener.accept()
        message, fds, _flags, _address = socket.recv_fds(conn, 1 << 20, 3)
        if len(fds) != 3 or not message:  # a test process that went away mid-request
            conn.close()
            for fd in fds:
                os.close(fd)
            continue
        if os.fork() == 0:
            listener.close()
            return conn, json.loads(message), fds
        conn.close()
        for fd in fds:
            os.close(fd)
        _reap_waiters()


def _reap_waiters() -> None:
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def _wait_for_cli(conn: socket.socket, request: dict, fds: list[int]) -> None:
    """In the waiter: fork the CLI process and report on it. Returns only in the CLI process."""
    pid = os.fork()
    if pid == 0:
        conn.close()
        _become_cli(request, fds)
        return
    for fd in fds:
        os.close(fd)
    try:
        conn.send(f"pid {pid}".encode())
    except OSError:  # the test gave up on it (its timeout): it was killed, or is about to be
        pass
    _, status = os.waitpid(pid, 0)
    try:
        conn.send(f"exit {os.waitstatus_to_exitcode(status)}".encode())
    finally:
        os._exit(0)


def _become_cli(request: dict, fds: list[int]) -> None:
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    # As `subprocess.run(close_fds=True)`: only stdin, stdout and stderr are open.
    for name in os.listdir("/proc/self/fd"):
        if int(name) > 2:
            try:
                os.close(int(name))
            except OSError:
                pass
    os.chdir(request["cwd"])
    os.umask(request["umask"])
    os.environ.clear()
    os.environ.update(request["env"])
    # What other processes read of this one (`/proc/<pid>/cmdline`, `/proc/<pid>/environ`: the
    # agent's `cat /proc/$PPID/environ`) is the memory the kernel laid out at exec, the server's:
    # written over with the request's, in the room the server was started with. After the
    # environment was swapped above, nothing in this process points there any more.
    command = [sys.executable, "-m", "orchestrator", *request["args"]]
    _write_exec_block(ARG_FIELDS, _nul_joined(command))
    _write_exec_block(ENV_FIELDS, _nul_joined(f"{name}={value}" for name, value in request["env"].items()))
    sys.path[0] = os.getcwd()  # `python -m` puts the working directory first
    sys.argv = ["-m", *request["args"]]


# Where the kernel keeps a process's arguments and environment: fields 48-49 and 50-51 of
# /proc/<pid>/stat (1-based), indexes 45-46 and 47-48 of what follows the command name.
ARG_FIELDS, ENV_FIELDS = (45, 46), (47, 48)


def _nul_joined(entries) -> bytes:
    return b"".join(entry.encode() + b"\0" for entry in entries)


def _exec_block(fields: tuple[int, int]) -> tuple[int, int]:
    with open("/proc/self/stat", "rb") as stat:
        values = stat.read().rsplit(b")", 1)[1].split()
    return int(values[fields[0]]), int(values[fields[1]])


def _write_exec_block(fields: tuple[int, int], content: bytes) -> None:
    start, end = _exec_block(fields)
    if len(content) > end - start:
        raise SystemExit(f"fork server: {len(content)} bytes do not fit in the {end - start} the server has")
    with open("/proc/self/mem", "r+b", buffering=0) as mem:
        mem.seek(start)
        mem.write(content + bytes(end - start - len(content)))


# The CLI process's exit status, once its command has ended.
_exit_status: int | str | None = None


def _leave_without_teardown() -> None:
    """The last atexit handler (registered before any other): after the threads were joined and
    every other handler ran, as at any interpreter's exit, leave without tearing the modules
    down. That teardown is 0.4 s of CPU for what the server imported, spent only to free memory
    the process is about to give back; a real process would spend it too, but nothing a test
    can see depends on it."""
    if _exit_status is None:
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    if _exit_status == "SIGINT":  # as Python ends on an uncaught KeyboardInterrupt
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(int(_exit_status))


def main() -> None:
    socket_path = sys.argv[1]
    atexit.register(_leave_without_teardown)
    # Not this script's folder (tests/, whose helpers' names could shadow a library's): the
    # server's own empty directory, until each CLI process puts its working directory there.
    sys.path[0] = os.getcwd()
    _preload()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(socket_path)
    listener.listen(16)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    conn, request, fds = _serve(listener)
    _wait_for_cli(conn, request, fds)


if __name__ == "__main__":
    main()
    # Only the CLI process gets here, as `python -m orchestrator` would run it; the exit status
    # is Python's own for how it ended.
    _exit_status = 1
    try:
        runpy.run_module("orchestrator", run_name="__main__", alter_sys=True)
        _exit_status = 0
    except SystemExit as end:
        _exit_status = 0 if end.code is None else end.code if isinstance(end.code, int) else 1
        raise
    except KeyboardInterrupt:
        _exit_status = "SIGINT"
        raise
