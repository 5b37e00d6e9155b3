"""Through the CLI: processes that the agent's commands and the checks detach with `setsid` end with them."""

from __future__ import annotations

from pathlib import Path

import pytest

from fake_messages_api.scripted_agent.plans import bash, edit_create, report
from tests.cli_helpers import read_json, run_cli, write_spec
from tests.e2e.safety.test_process_group_escapes_e2e import (
    kill_all,
    running_with_argument,
    unique_sleep,
)

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")


def test_setsid_in_the_agents_command_and_in_the_check_leaves_nothing_after_the_run(fake_api, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    in_agent, in_check = unique_sleep(), unique_sleep()
    fake_api.plans["feat-01"] = [
        [edit_create("features/feat-01.txt", "done\n")],
        [bash(f"setsid -f sleep {in_agent}; setsid sleep {in_agent} & echo started")],
        [report("Implemented feat-01")],
    ]
    spec = write_spec(project, 1, verify=f"setsid -f sleep {in_check}; test -f features/{{id}}.txt")
    try:
        result = run_cli(["run", str(spec)], project, fake_api)

        assert result.code == 0, result.stderr
        state = read_json(project / ".autonomous/state/execution-state.json")
        assert state["features"]["feat-01"]["status"] == "passed"
        assert running_with_argument(in_agent) == [], "the agent's setsid process outlived its command"
        assert running_with_argument(in_check) == [], "the check's setsid process outlived the check"
    finally:
        kill_all(running_with_argument(in_agent) + running_with_argument(in_check))
