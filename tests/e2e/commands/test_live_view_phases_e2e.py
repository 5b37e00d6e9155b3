"""Issue 27: the live view names what each feature (or the run) is doing, with the phase's own clock."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.cli_helpers import cli_env, orchestrate_command, start_tmux_pane, write_spec
from tests.git_helpers import init_repo

# ---- in a real terminal (tmux), through the CLI ------------------------------------------------


def _snapshots_in_tmux(tmp_path: Path, command: list[str], env: dict[str, str], cwd: Path) -> tuple[int, list[str]]:
    """Run `command` in a detached tmux pane (160 columns); its exit code and the screens seen
    every 0.2 s while it ran."""
    tmux, done = start_tmux_pane(tmp_path, command, env, cwd)
    screens: list[str] = []
    try:
        deadline = time.monotonic() + 120
        while not done.exists() and time.monotonic() < deadline:
            screens.append(subprocess.run([*tmux, "capture-pane", "-p"], capture_output=True, text=True).stdout)
            time.sleep(0.2)
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)
    assert done.exists(), "the command did not finish in the pane:\n" + (screens[-1] if screens else "")
    return int(done.read_text()), screens


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed: no real terminal to run the live view in")
@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.slow
def test_in_a_terminal_the_row_names_the_check_the_regression_checks_and_the_merge(fake_api, tmp_path, jobs) -> None:
    project = init_repo(tmp_path / "project")
    slow = "sleep 1.5 && test -f features/{id}.txt"  # long enough for a few screens of each phase
    spec = write_spec(project, 2, verify=slow, extra={"feat-02": {"depends_on": ["feat-01"]}})
    env = cli_env(fake_api, CI="", TERM="xterm-256color", COLUMNS="160", LINES="50")
    env.pop("NO_COLOR", None)

    code, screens = _snapshots_in_tmux(tmp_path, orchestrate_command("run", str(spec), "--jobs", jobs), env, project)

    assert code == 0, screens[-1]
    rows = [line for screen in screens for line in screen.splitlines()]
    assert any(re.search(r"feat-01 +attempt 1/3 +check +0m0\ds", row) for row in rows), screens
    assert any(re.search(r"feat-02 +attempt 1/3 +regression [01]/1 +0m0\ds", row) for row in rows), screens
    assert any(re.search(r"final verification [012]/2", row) for row in rows), screens
    if jobs == "2":
        assert any(re.search(r"feat-0\d +attempt 1/3 +merging", row) for row in rows), screens
