"""Warnings and notes on stderr while the live view is up: each on a line of its own, above the
status rows, as text (issue 18); without a live view, plain lines on stderr."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from fake_messages_api.faults import Fault
from tests.cli_helpers import cli_env, orchestrate_command, run_cli, start_tmux_pane, write_spec


def test_reports_that_cannot_be_written_are_warned_about_plainly(fake_api, tmp_path) -> None:
    project = tmp_path / "p[bold]x"
    project.mkdir()
    (project / "report-dir").mkdir()
    spec = write_spec(project, 1)

    result = run_cli(["run", str(spec), "--report", "report-dir", "--html", "report-dir"], project, fake_api)

    assert result.code == 0, result.stderr
    lines = result.stderr.splitlines()
    assert any(line.startswith("orchestrate: warning: could not write a report: ") for line in lines), lines
    assert any(line.startswith("orchestrate: warning: could not write the HTML report report-dir") for line in lines)


# ---- in a real terminal (tmux) -----------------------------------------------------------------


def _in_tmux(tmp_path: Path, command: list[str], env: dict[str, str], cwd: Path) -> tuple[int, list[str]]:
    """Run `command` in a detached tmux pane (a real terminal, 160 columns); its exit code and
    every line the pane showed, scroll-back included, as a user would have seen them."""
    tmux, done = start_tmux_pane(tmp_path, command, env, cwd)
    try:
        deadline = time.monotonic() + 120
        while not done.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        captured = subprocess.run([*tmux, "capture-pane", "-p", "-J", "-S", "-"], check=True, capture_output=True,
                                  text=True).stdout
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)
    assert done.exists(), f"the command did not finish in the pane:\n{captured}"
    return int(done.read_text()), captured.splitlines()


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed: no real terminal to run the live view in")
def test_in_a_terminal_warnings_print_on_lines_of_their_own_above_the_live_view(fake_api, tmp_path) -> None:
    project = tmp_path / "p[bold]x"
    project.mkdir()
    spec = write_spec(project, 2)
    assert run_cli(["run", str(spec), "--only", "feat-01"], project, fake_api).code == 0  # a state for --fresh
    # The first answer comes late, so the live view is drawn; the second is not JSON: a retry, and its warning.
    faults = iter([Fault.slow(1.0), Fault.not_json()])
    fake_api.faults = lambda index, request: next(faults, None)
    env = cli_env(fake_api, CI="", TERM="xterm-256color", COLUMNS="160", LINES="50")
    env.pop("NO_COLOR", None)

    code, lines = _in_tmux(tmp_path, orchestrate_command("run", str(spec), "--fresh"), env, project)

    assert code == 0, "\n".join(lines)
    fresh = [line for line in lines if line.startswith("orchestrate: --fresh: previous state moved to ")]
    retry = [line for line in lines if "model call failed" in line]
    assert len(fresh) == 1 and "p[bold]x" in fresh[0], lines
    assert len(retry) == 1 and retry[0].startswith("orchestrate: warning: model call failed"), lines
    assert retry[0].rstrip().endswith("retrying (attempt 2)"), lines  # nothing glued after it
    # The view is gone at the end (it is transient): no status row is left behind, mid-screen or last.
    assert not [line for line in lines if " of 2 done" in line or re.match(r"\s*\d+/\d+ feat-\d+ +attempt", line)], lines
    assert any("2 passed" in line for line in lines), lines
