"""No path from the bubblewrap sandbox to a host service, and the network only to listed hosts.

A host process listens on a Unix socket file under /var/tmp (as `docker.sock` or an ssh-agent
would): neither the agent's commands nor the checks can send it a byte, serial or `--jobs 2`.
`[sandbox] allow_hosts` opens the sandbox's proxy to the hosts listed, and to nothing else:
a server on 127.0.0.1 is reached through it; the same server under the name `localhost`,
not listed, is refused by the proxy, which never connects. No traffic leaves 127.0.0.1.
"""

from __future__ import annotations

import http.server
import socket
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fake_messages_api.scripted_agent.plans import bash, edit_create, report
from tests.cli_helpers import run_cli, write_spec
from tests.e2e.safety.test_sandbox import SERVED, _Handler, bwrap_problem
from tests.git_helpers import init_repo

pytestmark = pytest.mark.skipif(bwrap_problem() is not None, reason=f"no usable sandbox: {bwrap_problem()}")


class HostService:
    """A Unix socket server on the host, recording every byte any client sends."""

    def __init__(self) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="host-service-", dir="/var/tmp"))
        self.path = self.directory / "service.sock"
        self.received: list[bytes] = []
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(self.path))
        self._server.listen(16)
        self._server.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._server.accept()
            except OSError:
                continue
            with client:
                client.settimeout(2)
                try:
                    self.received.append(client.recv(4096) or b"(connected)")
                except OSError:
                    self.received.append(b"(connected)")

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self._server.close()
        self.path.unlink(missing_ok=True)
        self.directory.rmdir()


@pytest.fixture
def host_service() -> Iterator[HostService]:
    service = HostService()
    yield service
    service.close()


def _send(path: Path, what: str) -> str:
    """A command sending `what` to the socket at `path`; it never fails itself."""
    return (f"python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect('{path}'); "
            f"s.sendall(b'{what}')\" || true")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_no_agent_command_or_check_reaches_a_host_unix_socket(fake_api: Any, tmp_path: Path, host_service: HostService,
                                                              jobs: str) -> None:
    project = init_repo(tmp_path / "project")
    for fid in ("feat-01", "feat-02"):
        fake_api.plans[fid] = [
            [bash(_send(host_service.path, f"from-agent-{fid}"))],
            [edit_create(f"features/{fid}.txt", "done\n")],
            [report(f"Implemented {fid}")],
        ]
    spec = write_spec(tmp_path, 2, verify=f"{_send(host_service.path, 'from-check')}; test -f features/{{id}}.txt")

    result = run_cli(["run", str(spec), "--sandbox", "bwrap", "--jobs", jobs], project, fake_api)

    assert result.code == 0, result.stdout + result.stderr
    assert host_service.received == []
    assert "Operation not permitted" in str([r.body for r in fake_api.agent_requests("feat-01")])


@pytest.fixture
def web_server() -> Iterator[tuple[int, list[str]]]:
    hits: list[str] = []
    handler = type("Handler", (_Handler,), {"hits": hits})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1], hits
    server.shutdown()
    server.server_close()


def _fetch(url: str) -> str:
    # no_proxy emptied: urllib would otherwise go straight to a loopback address.
    return f"no_proxy= NO_PROXY= python3 -c \"import urllib.request as u; print(u.urlopen('{url}', timeout=10).read())\""


def test_allow_hosts_opens_the_proxy_to_the_listed_hosts_only(fake_api: Any, tmp_path: Path,
                                                             web_server: tuple[int, list[str]]) -> None:
    port, hits = web_server
    project = tmp_path / "project"
    project.mkdir()
    (project / "orchestrate.toml").write_text('[sandbox]\nallow_hosts = ["127.0.0.1"]\n')
    spec = write_spec(tmp_path, 2, extra={
        "feat-01": {"verify": f"{_fetch(f'http://127.0.0.1:{port}/from-check')} | grep -q served"},
        # Not listed: the proxy answers 403 and connects nowhere; the check passes only if refused.
        "feat-02": {"verify": f"test -f features/feat-02.txt && ! {_fetch(f'http://localhost:{port}/unlisted')}"},
    })
    fake_api.plans["feat-01"] = [
        [bash(_fetch(f"http://127.0.0.1:{port}/from-agent"))],
        [edit_create("features/feat-01.txt", "done\n")],
        [report("Implemented feat-01")],
    ]

    result = run_cli(["run", str(spec), "--sandbox", "bwrap"], project, fake_api, ORCHESTRATE_SANDBOX="")

    assert result.code == 0, result.stdout + result.stderr
    assert "/from-agent" in hits and "/from-check" in hits
    assert "/unlisted" not in hits
    assert SERVED in str([r.body for r in fake_api.agent_requests("feat-01")])


def test_a_host_that_is_not_a_name_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "orchestrate.toml").write_text('[sandbox]\nallow_hosts = ["https://pypi.org/simple"]\n')
    spec = write_spec(tmp_path, 1)
    result = run_cli(["run", str(spec)], tmp_path)
    assert result.code == 2
    assert "allow_hosts" in result.stderr and "not a host name" in result.stderr


def test_doctor_says_unix_sockets_are_closed_and_which_hosts_are_open(tmp_path: Path) -> None:
    (tmp_path / "orchestrate.toml").write_text('[sandbox]\nallow_hosts = ["pypi.org", "*.pythonhosted.org"]\n')
    result = run_cli(["doctor", "--sandbox", "bwrap"], tmp_path)
    assert result.code == 0, result.stdout + result.stderr
    assert "no Unix sockets; network: only pypi.org, *.pythonhosted.org, through the proxy" in result.stdout


def _spoofed(port: int, path: str) -> str:
    """A command asking the sandbox's proxy for a listed host with another host's name in `Host`."""
    request = f"GET http://127.0.0.1:{port}{path} HTTP/1.1\\r\\nHost: unlisted.example\\r\\nConnection: close\\r\\n\\r\\n"
    return (f"python3 -c \"import socket; s = socket.create_connection(('127.0.0.1', 3128)); "
            f"s.sendall(b'{request}'); print(s.recv(4096))\"")


@pytest.mark.attack
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_host_header_naming_another_host_is_refused(fake_api: Any, tmp_path: Path,
                                                     web_server: tuple[int, list[str]], jobs: str) -> None:
    """Issue 40, break 10: the plain-http proxy checked the request line's host and passed any
    `Host` header on, so a server of many sites would serve one that is not listed. Modes: the
    agent's commands and the checks, serial and `--jobs 2` (one proxy serves them all)."""
    port, hits = web_server
    project = init_repo(tmp_path / "project")
    (project / "orchestrate.toml").write_text('[sandbox]\nallow_hosts = ["127.0.0.1"]\n')
    spec = write_spec(tmp_path, 2, verify=f"{_spoofed(port, '/from-check')}; test -f features/{{id}}.txt")
    for fid in ("feat-01", "feat-02"):
        fake_api.plans[fid] = [
            [bash(_spoofed(port, "/from-agent"))],
            [edit_create(f"features/{fid}.txt", "done\n")],
            [report(f"Implemented {fid}")],
        ]

    result = run_cli(["run", str(spec), "--sandbox", "bwrap", "--jobs", jobs], project, fake_api, ORCHESTRATE_SANDBOX="")

    assert result.code == 0, result.stdout + result.stderr
    assert hits == []
    assert "does not name" in str([r.body for r in fake_api.agent_requests("feat-01")])
