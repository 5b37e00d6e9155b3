"""`orchestrate` processes for the tests, forked from a process that has already imported the
program (and the SDK), instead of each importing it anew: the suite starts some three hundred
`orchestrate run` processes, and importing is nearly all of what most of them spend (about 1.1
of their 1.2 s of CPU; the SDK's import alone is 1.0 s).

Each CLI process is still its own process: its own pid, arguments, directory, umask, environment
(as /proc/<pid>/cmdline and /proc/<pid>/environ show them too), stdin/stdout/stderr pipes read to
their end, exit status, the same `python -m orchestrator` entry. What it shares with the others is the modules imported
before the fork, so a request is forked only when its environment differs from the server's in
variables nothing reads at import (`_READ_AT_RUN_TIME`); any other difference, and every
process a test starts itself (`orchestrate_command`: the interrupt, crash and terminal tests),
gets a fresh interpreter. `ORCHESTRATE_TESTS_FORK_SERVER=0` gives every CLI process a fresh
interpreter (the suite then takes about a third longer).

One server per test process (each xdist worker), started on first use and ended with it.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import locale
import os
import selectors
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

SERVER_SCRIPT = Path(__file__).with_name("fork_server_process.py")
ENABLED = os.environ.get("ORCHESTRATE_TESTS_FORK_SERVER", "1") != "0"

ARGUMENT_ROOM, ENVIRONMENT_ROOM = 16 * 1024, 96 * 1024  # bytes; the kernel's limit is 128 KiB a string

# Variables a request may set differently from the server's environment: read by the program
# and its libraries when they run, never when they are imported (anthropic reads ANTHROPIC_LOG
# at import, so that one is not here).
_READ_AT_RUN_TIME_PREFIXES = ("ORCHESTRATE_", "CLAUDE_", "AWS_", "GOOGLE_", "CLOUDSDK_", "GIT_", "PYTEST_")
_READ_AT_RUN_TIME = {
    "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_MODEL",
    "HOME", "PATH", "TMPDIR", "USER", "LOGNAME", "SHELL",
}


def _read_at_run_time(name: str) -> bool:
    return name in _READ_AT_RUN_TIME or name.startswith(_READ_AT_RUN_TIME_PREFIXES)


class ForkServer:
    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = dict(env)
        self.served = 0  # CLI processes forked so far
        self.directory = tempfile.mkdtemp(prefix="orchestrate-fork-server-")
        self.socket_path = os.path.join(self.directory, "socket")
        self.log_path = os.path.join(self.directory, "server.log")
        # Room for each CLI process's own command line and environment, as other processes read
        # them from /proc (see `fork_server_process._become_cli`).
        command = [sys.executable, str(SERVER_SCRIPT), self.socket_path, " " * ARGUMENT_ROOM]
        server_env = {**self.env, "ORCHESTRATE_TESTS_FORK_SERVER_ROOM": " " * ENVIRONMENT_ROOM}
        self.argument_room, self.environment_room = _block_size(command), _block_size(_entries(server_env))
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                command, env=server_env, cwd=self.directory,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
            )
        assert self.process.stdout is not None
        if self.process.stdout.readline() != b"ready\n":
            self.process.wait()
            raise RuntimeError(f"the tests' fork server did not start: {Path(self.log_path).read_text()}")

    def can_serve(self, env: Mapping[str, str], cwd: Path, args: Sequence[str] = ()) -> bool:
        if self.process.poll() is not None or not os.path.isdir(cwd):
            return False
        if (_block_size([sys.executable, "-m", "orchestrator", *args]) > self.argument_room
                or _block_size(_entries(env)) > self.environment_room):
            return False
        differing = {name for name in self.env.keys() | env.keys() if self.env.get(name) != env.get(name)}
        return all(_read_at_run_time(name) for name in differing)

    def run(self, args: Sequence[str], cwd: Path, env: Mapping[str, str], timeout: float) -> tuple[int, str, str]:
        """As `subprocess.run(capture_output=True, text=True, stdin=DEVNULL, timeout=...)`."""
        umask = os.umask(0)
        os.umask(umask)
        self.served += 1
        request = json.dumps({"args": list(args), "cwd": str(cwd), "env": dict(env), "umask": umask}).encode()
        out_read, out_write = os.pipe()
        err_read, err_write = os.pipe()
        stdin = os.open(os.devnull, os.O_RDONLY)
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as conn:
            conn.connect(self.socket_path)
            try:
                socket.send_fds(conn, [request], [stdin, out_write, err_write])
            finally:
                for fd in (stdin, out_write, err_write):
                    os.close(fd)
            return _collect(conn, out_read, err_read, [sys.executable, "-m", "orchestrator", *args], timeout)

    def stop(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()  # the server leaves when its stdin ends
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.directory, ignore_errors=True)


def _entries(env: Mapping[str, str]) -> list[str]:
    return [f"{name}={value}" for name, value in env.items()]


def _block_size(strings: Sequence[str]) -> int:
    return sum(len(string.encode()) + 1 for string in strings)


def _collect(conn: socket.socket, out_read: int, err_read: int, command: list[str], timeout: float) -> tuple[int, str, str]:
    """Read stdout and stderr to their end and the exit status, as `Popen.communicate` does."""
    chunks: dict[int, list[bytes]] = {out_read: [], err_read: []}
    pid: int | None = None
    code: int | None = None
    selector = selectors.DefaultSelector()
    for fd in (out_read, err_read, conn.fileno()):
        selector.register(fd, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    try:
        while len(selector.get_map()) > 0:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                if code is None:  # still running (subprocess.run kills only its own child, too)
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid if pid is not None else _pid_from(conn), 9)
                raise subprocess.TimeoutExpired(command, timeout, b"".join(chunks[out_read]), b"".join(chunks[err_read]))
            for key, _ in selector.select(remaining):
                if key.fd == conn.fileno():
                    message = conn.recv(64).decode()
                    if not message:
                        selector.unregister(key.fd)
                        continue
                    kind, value = message.split()
                    if kind == "pid":
                        pid = int(value)
                    else:
                        code = int(value)
                    continue
                data = os.read(key.fd, 65536)
                if data:
                    chunks[key.fd].append(data)
                else:
                    selector.unregister(key.fd)
    finally:
        selector.close()
        os.close(out_read)
        os.close(err_read)
    if code is None:
        raise RuntimeError("the tests' fork server lost a CLI process without its exit status")
    return code, _text(b"".join(chunks[out_read])), _text(b"".join(chunks[err_read]))


def _pid_from(conn: socket.socket) -> int:
    """The CLI process's pid, when the timeout came before its waiter said it (sent as it forks)."""
    conn.settimeout(30)
    kind, value = conn.recv(64).decode().split()
    assert kind == "pid", kind
    return int(value)


def _text(data: bytes) -> str:
    # What `subprocess.run(text=True)` makes of a process's output.
    return data.decode(locale.getpreferredencoding(False)).replace("\r\n", "\n").replace("\r", "\n")


_server: ForkServer | None = None
unavailable: str | None = None if sys.platform.startswith("linux") else "the fork server needs Linux's /proc"


def server_for(env: Mapping[str, str]) -> ForkServer | None:
    """This test process's server (started with `env` if none runs yet), or None when disabled
    or unavailable (every CLI process is then a fresh interpreter)."""
    global _server, unavailable
    if not ENABLED or unavailable:
        return None
    if _server is None or _server.process.poll() is not None:
        # The server itself never holds a key or points at a test's fake API.
        try:
            _server = ForkServer({name: value for name, value in env.items() if name not in _READ_AT_RUN_TIME})
        except (OSError, RuntimeError) as err:
            unavailable = str(err)
            warnings.warn(f"every orchestrate process will be a fresh interpreter: {err}", stacklevel=2)
            return None
        atexit.register(_server.stop)
    return _server
