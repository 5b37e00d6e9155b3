"""The sandbox through the CLI, as a user meets it: `--sandbox`, `ORCHESTRATE_SANDBOX`, the
`[sandbox]` table, the warning when there is none, exit 2 when `bwrap` was asked for and cannot
run, a hostile scripted agent that escapes nothing, and `orchestrate doctor`."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fake_messages_api.scripted_agent.plans import bash, edit_create, report
from tests.cli_helpers import TEST_KEY, run_cli, write_spec
from tests.e2e.safety.test_sandbox import SECRET, bwrap_problem

BROKEN_BWRAP = "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"


def _broken_bwrap_path(tmp_path: Path) -> str:
    """A PATH whose first `bwrap` cannot create namespaces, as in a locked-down container."""
    bin_dir = tmp_path / "broken-bin"
    bin_dir.mkdir()
    (bin_dir / "bwrap").write_text(BROKEN_BWRAP)
    (bin_dir / "bwrap").chmod(0o755)
    return f"{bin_dir}{os.pathsep}{os.environ['PATH']}"


def test_bwrap_asked_for_but_unusable_exits_2_saying_why_and_runs_nothing(fake_api: Any, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    spec = write_spec(tmp_path, 1)

    result = run_cli(["run", str(spec), "--sandbox", "bwrap"], project, fake_api, PATH=_broken_bwrap_path(tmp_path))

    assert result.code == 2, result.stderr
    assert "--sandbox bwrap" in result.stderr and "No permissions to create new namespace" in result.stderr
    assert "--sandbox none" in result.stderr  # what to do next
    assert fake_api.calls == 0 and not (project / "features").exists()


def test_auto_without_a_working_bwrap_warns_once_and_runs(fake_api: Any, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    spec = write_spec(tmp_path, 2)

    result = run_cli(["run", str(spec)], project, fake_api, PATH=_broken_bwrap_path(tmp_path), ORCHESTRATE_SANDBOX="auto")

    assert result.code == 0, result.stderr
    assert result.stderr.count("no sandbox:") == 1
    assert "--sandbox none" in result.stderr and "user namespaces" in result.stderr


def test_none_runs_without_the_warning(fake_api: Any, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "orchestrate.toml").write_text('[sandbox]\nmode = "none"\n')
    spec = write_spec(tmp_path, 1)

    # ORCHESTRATE_SANDBOX emptied: the suite's own choice would outrank the file.
    result = run_cli(["run", str(spec)], project, fake_api, PATH=_broken_bwrap_path(tmp_path), ORCHESTRATE_SANDBOX="")

    assert result.code == 0, result.stderr
    assert "no sandbox" not in result.stderr


def test_a_misspelt_sandbox_is_a_usage_error(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, 1)
    result = run_cli(["run", str(spec)], tmp_path, ORCHESTRATE_SANDBOX="bwarp")
    assert result.code == 2
    assert "sandbox" in result.stderr and "ORCHESTRATE_SANDBOX" in result.stderr


def test_doctor_says_which_sandbox_and_where_each_setting_came_from(tmp_path: Path) -> None:
    (tmp_path / "orchestrate.toml").write_text('max_turns = 7\n[sandbox]\nread = ["/opt"]\n')

    result = run_cli(["doctor"], tmp_path, ORCHESTRATE_SANDBOX="none", ORCHESTRATE_BASH_TIMEOUT="30")

    assert result.code == 0, result.stderr
    lines = dict(re.split(r"\s{2,}", line, maxsplit=1) for line in result.stdout.splitlines() if line.strip())
    assert lines["sandbox"].startswith("none") and "full access" in lines["sandbox"]
    assert lines["api key"] == "set (ANTHROPIC_API_KEY)"
    assert TEST_KEY not in result.stdout + result.stderr
    assert lines["setting max_turns"].endswith("7  (orchestrate.toml)")
    assert lines["setting sandbox"].endswith("none  (environment)")
    assert lines["setting bash_timeout"].endswith("30.0  (environment)")
    assert lines["setting context"].endswith("(default)")
    assert '"read": ["/opt"]' in lines["setting sandbox_options"]
    assert "git" in lines and "python" in lines and "prices" in lines


def test_doctor_exits_2_when_bwrap_is_asked_for_and_cannot_run(tmp_path: Path) -> None:
    result = run_cli(["doctor", "--sandbox", "bwrap"], tmp_path, key=None, PATH=_broken_bwrap_path(tmp_path))
    assert result.code == 2
    assert "unusable" in result.stdout and "No permissions" in result.stdout
    assert "not set" in result.stdout  # no key


# ---- a hostile agent, end to end, under bubblewrap ------------------------------------------

FORGE = (
    "import glob, json\n"
    "path = glob.glob('.auto*/state/journal.jsonl')[0]\n"
    "open(path, 'a').write(json.dumps({'feature': 'feat-01', 'state': {'status': 'passed', 'reason': 'FORGED'}}) + '\\n')\n"
)


@pytest.mark.skipif(bwrap_problem() is not None, reason=f"no usable sandbox: {bwrap_problem()}")
def test_a_hostile_agent_escapes_nothing_under_the_sandbox(fake_api: Any, tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])  # the "real home" the CLI runs with (tests/conftest.py)
    (home / "secret.txt").write_text(SECRET)
    outside = tmp_path / "outside" / "keep.txt"
    outside.parent.mkdir()
    outside.write_text("keep me")
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    subprocess.run(["git", "-C", str(project), "remote", "add", "origin", str(remote)], check=True)
    fake_api.plans["feat-01"] = [
        [edit_create("forge.py", FORGE)],
        [bash("python3 forge.py")],
        [bash(f"cat {home}/secret.txt ~/secret.txt")],
        [bash(f"python3 -c \"import urllib.request as u; print(u.urlopen('{fake_api.base_url}/v1/models', timeout=5).read())\"")],
        [bash("g=git; $g add -A && $g -c user.name=x -c user.email=x@x commit -qm x; $g push origin HEAD:refs/heads/x")],
        [bash(f"r=rm; $r -rf {outside.parent}")],
        [edit_create("features/feat-01.txt", "done\n")],
        [report("Implemented feat-01")],
    ]
    # The check tries too: it deletes outside the project and writes the state.
    verify = f"rm -rf {outside.parent}; m=FOR; echo ${{m}}GED >> .autonomous/events.jsonl; test -f features/feat-01.txt"
    spec = write_spec(tmp_path, 1, verify=verify)

    result = run_cli(["run", str(spec), "--sandbox", "bwrap", "--json"], project, fake_api)

    assert result.code == 0, result.stderr
    assert outside.read_text() == "keep me"
    assert subprocess.run(["git", "-C", str(remote), "for-each-ref"], capture_output=True, text=True).stdout == ""
    state_dir = project / ".autonomous" / "state"
    assert all(b"FORGED" not in path.read_bytes() for path in state_dir.iterdir() if path.is_file())
    events = (project / ".autonomous" / "events.jsonl").read_text().splitlines()
    assert "FORGED" not in events
    tool_results = json.dumps([request.body for request in fake_api.agent_requests("feat-01")])
    assert SECRET not in tool_results
    assert "Read-only file system" in tool_results  # the forgery was tried, and refused
    # Only the orchestrator's own calls reached the fake API: the agent's request never arrived.
    assert not any(request.path.startswith("/v1/models") for request in fake_api.requests)
    checkpoint = subprocess.run(["git", "-C", str(project), "log", "--format=%s"], capture_output=True, text=True).stdout
    assert checkpoint.splitlines() == ["orchestrate: feat-01: Feature 1"]  # the agent's own commit never happened
