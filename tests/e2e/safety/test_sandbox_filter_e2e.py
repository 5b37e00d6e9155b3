"""The sandbox's seccomp filter and its proxy, piece by piece: what a command inside can and
cannot open or call (each way the filter is installed), that real work (shells, python, pip,
pytest, git, a C compiler) runs under the allowlist, and the proxy's allow-list, which refuses
before it connects. Only 127.0.0.1 and `localhost` are used."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest

from orchestrator.safety.bubblewrap.net_proxy import proxy_socket
from orchestrator.safety.bubblewrap.sandbox import choose_sandbox
from orchestrator.safety.bubblewrap.seccomp_filter import KNOWN_UP_TO, machine
from orchestrator.safety.bubblewrap.syscall_numbers import SYSCALLS
from tests.e2e.safety.test_sandbox import bwrap_problem
from tests.e2e.safety.test_sandbox_boundary_e2e import UNLISTED

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


def _wrapped(tmp_path: Path, installer: str, argv: list[str]) -> list[str]:
    """`argv` in a sandbox whose filter `installer` installs: bwrap (`--seccomp`), `sandbox_init`
    (with a proxy's bridge to fork first), or the nesting variant (the Claude Code CLI's)."""
    sandbox = choose_sandbox("bwrap", tmp_path, allow_hosts=["127.0.0.1"] if installer == "init" else [])
    return sandbox.wrap(argv, tmp_path, nests=installer == "nesting")


@pytest.mark.attack
@needs_bwrap
@pytest.mark.parametrize("installer", ["bwrap", "init", "nesting"])
def test_a_system_call_left_off_the_allowlist_is_refused_inside(tmp_path: Path, installer: str) -> None:
    """The allowlist, not a deny-list: calls the deny-list let through (`UNLISTED`'s first five),
    a number newer than the list (ENOSYS, as the kernel answers an unknown one), io_uring."""
    numbers = SYSCALLS[machine()]
    calls = {name: [numbers[name], *args] for name, args in UNLISTED.items()}
    calls |= {"io_uring_setup": [numbers["io_uring_setup"], 1, 0], "newer": [KNOWN_UP_TO + 40, 0]}
    probe = ("import ctypes, json, os, sys; c = ctypes.CDLL(None, use_errno=True)\n"
             "for name, (nr, *args) in json.loads(sys.argv[1]).items():\n"
             "    ctypes.set_errno(0)\n"
             "    done = c.syscall(nr, *(ctypes.c_long(a) for a in args))\n"
             "    print(name, 'ok' if done != -1 else os.strerror(ctypes.get_errno()))")
    result = subprocess.run(_wrapped(tmp_path, installer, [sys.executable, "-c", probe, json.dumps(calls)]),
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    seen = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    expected = dict.fromkeys(UNLISTED, "Operation not permitted")
    assert seen == expected | {"io_uring_setup": "Function not implemented", "newer": "Function not implemented"}


# What builds, test runners and shells do: a pipeline, python with threads, a process pool and
# subprocesses, pip installing a local wheel, pytest, git, and a C program with threads and fork.
REAL_WORK = r"""
set -e
printf 'b\na\nc\n' | sort | head -n 1 | tr a-z A-Z
"$PY" - <<'PY'
import concurrent.futures, subprocess, threading
threads = [threading.Thread(target=lambda: None) for _ in range(4)]
[t.start() for t in threads]; [t.join() for t in threads]
with concurrent.futures.ProcessPoolExecutor(2) as pool:
    assert sum(pool.map(abs, [-1, -2, 3])) == 6
print(subprocess.run(["sh", "-c", "echo $((6 * 7))"], capture_output=True, text=True, check=True).stdout.strip())
PY
"$PY" -m pip install -q --no-index --no-deps --disable-pip-version-check --target site hello_sandbox-1.0-py3-none-any.whl
PYTHONPATH=site "$PY" -c 'import hello; print(hello.GREETING)'
printf 'import subprocess\ndef test_it():\n    assert subprocess.run(["true"]).returncode == 0\n' > test_work.py
PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 "$PY" -m pytest -q -p no:cacheprovider test_work.py | tail -n 1 | cut -d ' ' -f 1-2
git init -q repo && git -C repo -c user.name=n -c user.email=n@example.com commit -q --allow-empty -m one
git -C repo log --format=%s
if command -v gcc >/dev/null; then
  printf '#include <pthread.h>\n#include <stdio.h>\n#include <sys/wait.h>\n#include <unistd.h>\n'\
'static void *run(void *a) { return a; }\n'\
'int main(void) { pthread_t t; pthread_create(&t, 0, run, 0); pthread_join(t, 0);\n'\
'  pid_t p = fork(); if (p == 0) _exit(7); int s; waitpid(p, &s, 0); printf("c %%d\\n", WEXITSTATUS(s)); }\n' > work.c
  gcc -pthread -o work work.c && ./work
else
  echo "c 7"
fi
"""


def _wheel(directory: Path) -> None:
    """A local package, built by hand (no build backend needed): `hello` with GREETING."""
    info = "hello_sandbox-1.0.dist-info"
    files = {"hello/__init__.py": 'GREETING = "hello"\n', f"{info}/METADATA": "Metadata-Version: 2.1\nName: hello-sandbox\nVersion: 1.0\n",
             f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    with zipfile.ZipFile(directory / "hello_sandbox-1.0-py3-none-any.whl", "w") as wheel:
        for name, text in files.items():
            wheel.writestr(name, text)
        wheel.writestr(f"{info}/RECORD", "".join(f"{name},,\n" for name in [*files, f"{info}/RECORD"]))


@needs_bwrap
@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_real_work_runs_under_the_allowlist(tmp_path: Path) -> None:
    _wheel(tmp_path)
    argv = ["env", f"PY={sys.executable}", "bash", "-c", REAL_WORK]
    result = subprocess.run(_wrapped(tmp_path, "bwrap", argv), cwd=tmp_path, capture_output=True, text=True, timeout=180,
                            check=False)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert result.stdout.splitlines() == ["A", "42", "hello", "1 passed", "one", "c 7"], result.stdout
