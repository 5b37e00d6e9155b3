"""Nothing the agent started outlives its attempt: the REAL bundled Claude Code runs a command
that detaches a process into a session of its own (`setsid sleep 300 &`), with no sandbox
(so no `--die-with-parent` to end it); when the run is over that process is gone.

The SDK's close ends the CLI but not a process that left its group; what ends it is
`CliLaunch.close` stopping every process carrying the attempt's marker (`stop_leftovers`).
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from fake_messages_api.scripted_agent.agent_turn import AgentTurn
from fake_messages_api.scripted_agent.plans import Block, bash, edit_create, report, text
from tests.cli_helpers import read_json, run_cli, write_spec
from tests.fake_api_fixtures import running_fake_api
from tests.git_helpers import init_repo

pytest.importorskip(
    "claude_agent_sdk", reason="the claude-code extra is not installed: pip install 'orchestrate[claude-code]'"
)
pytestmark = pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs Linux /proc")
RUN_TIMEOUT = 600.0  # one Claude Code session on a loaded 2-core machine


def _running(pid: int) -> bool:
    """Whether `pid` is still our detached `sleep 300` (not a zombie, not a reused pid)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"sleep\x00300" in cmdline and "\nState:\tZ" not in status


def test_a_process_the_agent_detached_is_gone_when_the_run_ends(tmp_path: Path) -> None:
    project = init_repo(tmp_path / "project")
    pid_file = tmp_path / "leftover.pid"  # outside the project: --sandbox none lets the agent write it
    steps = [
        [bash(f"setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $! > {pid_file}")],
        [edit_create("features/feat-01.txt", "done\n")],
        [report("Implemented feat-01")],
    ]

    def plan(turn: AgentTurn) -> list[Block]:
        return steps[turn.step] if turn.step < len(steps) else [text("Done.")]

    spec = write_spec(tmp_path, 1)
    pid = None
    try:
        with running_fake_api(plans={"feat-01": plan}) as fake:
            result = run_cli(["run", str(spec), "--agent", "claude-code", "--sandbox", "none"], project, fake,
                             timeout=RUN_TIMEOUT)
        assert result.code == 0, result.stderr[-3000:]
        assert read_json(project / ".autonomous/logs/feat-01.json")["status"] == "passed"
        assert pid_file.exists(), "the agent's command never ran"
        pid = int(pid_file.read_text())
        assert not _running(pid), f"the agent's detached process {pid} outlived the run"
    finally:
        if pid is not None and _running(pid):
            os.kill(pid, signal.SIGKILL)
