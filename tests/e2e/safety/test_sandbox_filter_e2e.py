"""The sandbox's Unix-socket filter and its proxy, piece by piece: the BPF program for each
machine, what a command inside can and cannot open (both ways the filter is installed), and the
proxy's allow-list, which refuses before it connects. Only 127.0.0.1 and `localhost` are used."""

from __future__ import annotations

import shutil
import socket
import subprocess
import threading
from pathlib import Path

import pytest

from orchestrator.safety.net_proxy import proxy_socket
from orchestrator.safety.sandbox import choose_sandbox
from tests.e2e.safety.test_sandbox import bwrap_problem

needs_bwrap = pytest.mark.skipif(bwrap_problem() is not None, reason=f"no usable sandbox: {bwrap_problem()}")

PROBE = """
import shutil
import socket
def attempt(make):
    try:
        make()
        return "ok"
    except OSError as err:
        return err.strerror
print("unix", attempt(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)))
print("unix-dgram", attempt(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)))
print("pair", attempt(socket.socketpair))
print("inet", attempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM)))
"""


@needs_bwrap
@pytest.mark.parametrize("allow_hosts", [[], ["127.0.0.1"]], ids=["bwrap-seccomp", "with-proxy"])
def test_inside_the_sandbox_no_unix_socket_opens_but_pairs_and_inet_do(tmp_path: Path, allow_hosts: list[str]) -> None:
    sandbox = choose_sandbox("bwrap", tmp_path, allow_hosts=allow_hosts)
    result = subprocess.run(sandbox.wrap(["python3", "-c", PROBE], tmp_path), capture_output=True, text=True,
                            timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    seen = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    assert seen == {"unix": "Operation not permitted", "unix-dgram": "Operation not permitted", "pair": "ok",
                    "inet": "ok"}


def _listener() -> tuple[socket.socket, list[bytes]]:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    got: list[bytes] = []

    def serve() -> None:
        while True:
            try:
                client, _ = server.accept()
            except OSError:
                return
            with client:
                data = client.recv(100)
                got.append(data)
                client.sendall(b"echo:" + data)

    threading.Thread(target=serve, daemon=True).start()
    return server, got


def _ask(path: str, request: bytes) -> bytes:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(10)
        client.connect(path)
        client.sendall(request)
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = client.recv(4096)
            if not chunk:
                break
            answer += chunk
        if answer.startswith(b"HTTP/1.1 200"):
            client.sendall(b"hello")
            answer += client.recv(100)
        return answer


def test_the_proxy_tunnels_to_a_listed_host_and_refuses_others_without_connecting() -> None:
    server, got = _listener()
    port = server.getsockname()[1]
    path = proxy_socket(("127.0.0.1",))
    try:
        refused = _ask(path, f"CONNECT localhost:{port} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
        assert refused.startswith(b"HTTP/1.1 403") and b"allow_hosts" in refused
        assert got == []  # refused before any connection was made
        tunneled = _ask(path, f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode())
        assert tunneled.startswith(b"HTTP/1.1 200") and tunneled.endswith(b"echo:hello")
        assert got == [b"hello"]
    finally:
        server.close()


# In a sandbox: its capabilities, then whether a new user namespace (with root's capabilities
# over it) lets it undo the sandbox's mounts: remount / read-write, unmount or write .autonomous.
NESTED_ATTACK = (
    "awk '/^CapEff/ {print \"capeff\", $2}' /proc/self/status; "
    "unshare -Urm sh -c 'mount -o remount,rw,bind / && echo remounted; umount -l .autonomous && echo unmounted; "
    "echo forged > .autonomous/state && echo forged; touch /etc/orchestrate-attack-probe && echo wrote-etc; echo in-a-namespace'; true"
)


@needs_bwrap
@pytest.mark.skipif(shutil.which("unshare") is None, reason="util-linux's unshare is not installed")
@pytest.mark.parametrize("nests", [False, True], ids=["command", "nesting (the Claude Code CLI)"])
def test_no_capability_and_no_namespace_undoes_the_sandboxs_mounts(tmp_path: Path, nests: bool) -> None:
    """A command may not make a user namespace at all; the Claude Code CLI's sandbox may (its
    shell prefix nests a bubblewrap), but the mounts it was given are locked in there."""
    (tmp_path / ".autonomous").mkdir()
    (tmp_path / ".autonomous" / "state").write_text("the run's\n")
    sandbox = choose_sandbox("bwrap", tmp_path)
    result = subprocess.run(sandbox.wrap(["sh", "-c", NESTED_ATTACK], tmp_path, nests=nests), capture_output=True,
                            text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "capeff 0000000000000000"
    assert not {"remounted", "unmounted", "forged", "wrote-etc"} & set(lines), result.stdout
    assert ("in-a-namespace" in lines) == nests, result.stdout + result.stderr
    assert (tmp_path / ".autonomous" / "state").read_text() == "the run's\n"
    assert not Path("/etc/orchestrate-attack-probe").exists()
