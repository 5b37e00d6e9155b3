"""The red team's escapes, re-run under the bubblewrap sandbox: each one must fail.

Every escape is driven twice, through the agent's bash tool and through a feature check,
against a project with a journal, a git repository, a "real home" holding a secret, a git
remote, an HTTP server on 127.0.0.1 and a file outside the project. What the sandbox must
still allow (writing the project, `git status` and `git diff`, Python) is checked too.
Skipped, with the reason, where bubblewrap is missing or cannot create namespaces.
"""

from __future__ import annotations

import http.server
import os
import shutil
import subprocess
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest

from orchestrator.run.checks.running.check_command import run_check
from orchestrator.safety.bubblewrap.sandbox import Sandbox, choose_sandbox, probe_bwrap
from orchestrator.tools.bash import run_bash
from orchestrator.tools.context import ToolContext
from tests.environments import sandboxed


def bwrap_problem() -> str | None:
    """Why the sandbox cannot be tested here, or None."""
    found = shutil.which("bwrap")
    if found is None:
        return "bubblewrap (bwrap) is not installed: apt-get install bubblewrap"
    return probe_bwrap(found)


needs_bwrap = pytest.mark.skipif(bwrap_problem() is not None, reason=f"no usable sandbox: {bwrap_problem()}")
pytestmark = needs_bwrap
SECRET = "home-secret-4f1c9a"
SERVED = "served-by-host-7d2e"


class _Handler(http.server.BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.hits.append(self.path)
        body = SERVED.encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: object) -> None:
        pass


@dataclass
class World:
    project: Path
    home: Path
    outside: Path
    remote: Path
    port: int
    hits: list[str]
    sandbox: Sandbox

    @property
    def journal(self) -> Path:
        return self.project / ".autonomous" / "state" / "journal.jsonl"


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    home = tmp_path / "real-home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(SECRET)
    (home / "secret.txt").write_text(SECRET)
    monkeypatch.setenv("HOME", str(home))
    project = tmp_path / "project"
    (project / ".autonomous" / "state").mkdir(parents=True)
    (project / ".autonomous" / "state" / "journal.jsonl").write_text('{"feature": "f1"}\n')
    (project / "app.py").write_text("print('app')\n")
    _git(project, "init", "-q")
    _git(project, "-c", "user.name=t", "-c", "user.email=t@t", "add", "app.py")
    _git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
    remote = tmp_path / "remote.git"
    _git(tmp_path, "init", "-q", "--bare", str(remote))
    _git(project, "remote", "add", "origin", str(remote))
    outside = tmp_path / "outside" / "keep.txt"
    outside.parent.mkdir()
    outside.write_text("keep me")
    hits: list[str] = []
    handler = type("Handler", (_Handler,), {"hits": hits})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield World(project, home, outside, remote, server.server_address[1], hits, choose_sandbox("bwrap", project))
    finally:
        server.shutdown()
        server.server_close()


def through_tool(world: World, command: str) -> str:
    ctx = ToolContext(environment=sandboxed(world.project, world.sandbox), bash_timeout=30)
    return run_bash({"command": command}, ctx).content


def through_check(world: World, command: str) -> str:
    result = run_check(command, sandboxed(world.project, world.sandbox), attempt=1, timeout=30)
    return result.output + ("" if result.success else f"\n[check failed: {result.exit_code}]")


DRIVERS = {"bash tool": through_tool, "check": through_check}
Driver = Callable[[World, str], str]


@pytest.fixture(params=sorted(DRIVERS))
def drive(request: pytest.FixtureRequest) -> Driver:
    return DRIVERS[request.param]


def test_writing_the_journal_through_python_fails(world: World, drive: Driver) -> None:
    before = world.journal.read_bytes()
    forged = '{"feature": "f1", "state": {"status": "passed"}}'
    # Spelt around the shell policy, as the red team did: only the sandbox stands in the way.
    script = "import sys; open(sys.argv[1], 'a').write(sys.argv[2])"
    output = drive(world, f"python3 -c \"{script}\" \"$(ls -d .auto*)/state/journal.jsonl\" '{forged}'")
    assert world.journal.read_bytes() == before
    assert "Read-only file system" in output


def test_a_file_in_the_real_home_cannot_be_read(world: World, drive: Driver) -> None:
    output = drive(world, f"cat {world.home}/secret.txt ~/.ssh/id_ed25519 $HOME/secret.txt; ls -a ~")
    assert SECRET not in output
    assert "No such file" in output


@pytest.mark.parametrize("client", ["curl", "wget", "python"])
def test_no_host_can_be_reached(world: World, drive: Driver, client: str) -> None:
    url = f"http://127.0.0.1:{world.port}/phone-home"
    commands = {
        "curl": f"curl -sS --max-time 5 {url}",
        "wget": f"wget -q -T 5 -t 1 -O- {url}",
        "python": f"python3 -c \"import urllib.request; print(urllib.request.urlopen('{url}', timeout=5).read())\"",
    }
    if client != "python" and shutil.which(client) is None:
        pytest.skip(f"{client} is not installed")
    output = drive(world, commands[client])
    assert SERVED not in output
    assert world.hits == []


def test_a_setsid_process_does_not_survive_its_command(world: World, drive: Driver) -> None:
    token = f"{uuid.uuid4().int % 10**6}.{uuid.uuid4().int % 10**6}"  # a unique sleep length
    drive(world, f"setsid -f env -i sleep 1{token}; setsid nohup sleep 1{token[::-1]} >/dev/null 2>&1 & echo started")
    assert _with_token(token) == [] and _with_token(token[::-1]) == []


def _cmdline(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def test_git_push_fails(world: World, drive: Driver) -> None:
    output = drive(world, "g=git; $g push origin HEAD:refs/heads/main")
    assert _git(world.remote, "for-each-ref") == ""
    assert "check failed" in output or "exit code" in output


def test_deleting_outside_the_project_fails(world: World, drive: Driver) -> None:
    drive(world, f"rm -rf {world.outside.parent}; find {world.outside.parent} -delete")
    assert world.outside.read_text() == "keep me"


def test_the_work_still_works_inside(world: World, drive: Driver) -> None:
    output = drive(world, "echo made > made.txt && git status --short && git diff --stat && python3 -c 'print(6*7)'")
    assert (world.project / "made.txt").read_text() == "made\n"
    assert "?? made.txt" in output and "42" in output
    assert "check failed" not in output and "exit code" not in output


def test_paths_listed_in_the_config_are_reachable(world: World, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    cache = world.home / ".cache"
    cache.mkdir()
    world.sandbox = choose_sandbox("bwrap", world.project, read=[str(shared)], write=["~/.cache"])
    (shared / "data.txt").write_text("shared data")
    output = through_check(world, f"cat {shared}/data.txt; echo cached > ~/.cache/x; touch {shared}/no")
    assert "shared data" in output
    assert (cache / "x").read_text() == "cached\n"
    assert not (shared / "no").exists()


@needs_bwrap
def test_a_tool_chain_the_path_reaches_under_tmp_stays_usable(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A CI job's venv in /tmp: the sandbox's /tmp is a fresh one, yet the PATH must still work."""
    venv = Path(tempfile.mkdtemp(prefix="orchestrate-venv-", dir="/tmp"))
    try:
        (venv / "bin").mkdir()
        tool = venv / "bin" / "hello-tool"
        tool.write_text("#!/bin/sh\necho hello from the venv\n")
        tool.chmod(0o755)
        monkeypatch.setenv("PATH", f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}")
        world.sandbox = choose_sandbox("bwrap", world.project)
        output = through_check(world, f"hello-tool; ls {tmp_path}/outside; touch {venv}/bin/x")
        assert "hello from the venv" in output
        assert "keep.txt" not in output  # the rest of /tmp stays out of sight
        assert not (venv / "bin" / "x").exists()  # and the tool chain is read-only
    finally:
        shutil.rmtree(venv)


CHILD = """
import sys
from pathlib import Path
from orchestrator.run.checks.running.check_command import run_check
from orchestrator.tools.bash import run_bash
from orchestrator.tools.context import ToolContext
from orchestrator.safety.bubblewrap.sandbox import choose_sandbox
from tests.environments import sandboxed
project, driver, command = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
sandbox = choose_sandbox("bwrap", project)
if driver == "check":
    run_check(command, sandboxed(project, sandbox), attempt=1, timeout=60)
else:
    run_bash({"command": command}, ToolContext(environment=sandboxed(project, sandbox), bash_timeout=60))
"""


@pytest.mark.parametrize("driver", ["bash tool", "check"])
def test_a_setsid_process_dies_even_when_the_orchestrator_is_killed(world: World, driver: str) -> None:
    import signal
    import sys
    import time

    token = f"{uuid.uuid4().int % 10**6}.{uuid.uuid4().int % 10**6}"
    command = f"setsid -f env -i sleep 1{token}; sleep 60"
    repo = Path(__file__).resolve().parents[3]
    env = {**os.environ, "PYTHONPATH": str(repo)}
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(world.project), driver, command], env=env)
    try:
        deadline = time.monotonic() + 20
        while not _with_token(token):  # wait for the escapee to start
            assert child.poll() is None and time.monotonic() < deadline, "the command never started"
            time.sleep(0.05)
        child.send_signal(signal.SIGKILL)  # kill -9: the orchestrator cleans nothing up
        child.wait()
        while _with_token(token) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _with_token(token) == [], "the setsid process outlived the killed orchestrator"
    finally:
        for pid in _with_token(token):
            os.kill(int(pid), signal.SIGKILL)
        if child.poll() is None:
            child.kill()


def _with_token(token: str) -> list[str]:
    """The pids of `sleep 1<token>` (not of the shells and Pythons whose command line names it)."""
    return [pid for pid in os.listdir("/proc") if pid.isdigit() and _cmdline(pid) == f"sleep 1{token} "]


def test_a_spec_kept_in_the_home_itself_does_not_open_the_home(world: World) -> None:
    spec = world.home / "spec.json"
    spec.write_text("{}")
    world.sandbox = choose_sandbox("bwrap", world.project, also_read=[world.home, spec])
    output = through_check(world, f"cat {spec}; echo; cat {world.home}/secret.txt")
    assert "{}" in output and SECRET not in output
