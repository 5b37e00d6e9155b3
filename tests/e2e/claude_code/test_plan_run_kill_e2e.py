"""A real `orchestrate run --agent claude-code` on a Claude plan, without `--max-cost`, killed
with SIGKILL while Claude Code is in its first call: `status` then shows the attempt booked at
its budget (`plan_attempt_budget`, $5 by default), where it used to show nothing.

Offline and without Anthropic: the home holds a sign-in with a dummy token, and HTTPS_PROXY
(which the run passes to Claude Code, and Claude Code honours) points at a socket of the test
that accepts the CLI's CONNECT to api.anthropic.com and never answers, so the attempt hangs
in its first call until the kill. The test waits for that CONNECT: a CLI that went anywhere
else would fail it rather than pass.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.agent_settings import DEFAULT_PLAN_ATTEMPT_BUDGET
from tests.cli_helpers import cli_env, orchestrate_command, write_spec

claude_agent_sdk = pytest.importorskip("claude_agent_sdk", reason="the claude-code extra is not installed")
CONNECT_TIMEOUT = 240.0  # the run's start and Claude Code's on a loaded 2-core machine


class Blackhole:
    """A proxy that takes every connection and answers none; `first` is set on the first request line."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.first = threading.Event()
        self.requests: list[bytes] = []
        self._held: list[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            self._held.append(client)
            self.requests.append(client.recv(200))
            self.first.set()

    def close(self) -> None:
        self.server.close()
        for client in self._held:
            client.close()


@pytest.fixture
def blackhole() -> Iterator[Blackhole]:
    hole = Blackhole()
    yield hole
    hole.close()


def _signed_in_home(home: Path) -> Path:
    (home / ".claude").mkdir(parents=True)
    oauth = {"accessToken": "sk-ant-oat01-dummy-for-a-test", "refreshToken": "sk-ant-ort01-dummy",
             "expiresAt": int(time.time() * 1000) + 86_400_000, "scopes": ["user:inference"], "subscriptionType": "max"}
    (home / ".claude" / ".credentials.json").write_text(json.dumps({"claudeAiOauth": oauth}), encoding="utf-8")
    return home


def test_a_plan_run_killed_mid_attempt_without_max_cost_books_the_attempts_budget(tmp_path: Path, blackhole: Blackhole):
    project = tmp_path / "project"
    project.mkdir()
    spec = write_spec(tmp_path, 1)
    env = cli_env(None, key=None, HOME=str(_signed_in_home(tmp_path / "home")), ORCHESTRATE_SANDBOX="none",
                  HTTPS_PROXY=f"http://127.0.0.1:{blackhole.port}")
    run = subprocess.Popen(orchestrate_command("run", str(spec), "--agent", "claude-code", "--no-commit"), cwd=project,
                           env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           start_new_session=True)
    try:
        reached = blackhole.first.wait(CONNECT_TIMEOUT)
    finally:
        os.killpg(run.pid, signal.SIGKILL)
        _, stderr = run.communicate(timeout=60)
    assert reached, f"Claude Code never made its call: {stderr.decode(errors='replace')[-2000:]}"
    assert blackhole.requests[0].startswith(b"CONNECT api.anthropic.com:443")  # mid-call on the plan, at the kill
    done = subprocess.run(orchestrate_command("status", "--json"), cwd=project, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert shown["features"]["feat-01"]["costUsd"] == pytest.approx(DEFAULT_PLAN_ATTEMPT_BUDGET)
