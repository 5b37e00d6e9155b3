"""`orchestrate run --agent claude-code`, end to end: the real bundled Claude Code CLI, started by
the Agent SDK, driven by the fake Messages API with Claude Code's own tool names."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from fake_messages_api.scripted_agent.plans import tool_use
from tests.cli_helpers import TEST_KEY, cli_env, orchestrate_command, run_cli, write_spec

pytest.importorskip("claude_agent_sdk", reason="the claude-code extra is not installed")

REPORT = "mcp__orchestrate__report_feature"
BWRAP = ["--sandbox", "bwrap"] if shutil.which("bwrap") else ["--sandbox", "none"]


def _builds(feature_id: str) -> list[list[dict]]:
    """Write the feature's file, look at it, report a decision: Claude Code's tools, one call a step."""
    return [
        [tool_use("Write", {"file_path": f"features/{feature_id}.txt", "content": "built\n"})],
        [tool_use("Bash", {"command": f"cat features/{feature_id}.txt", "description": "look"})],
        [tool_use(REPORT, {"summary": f"Built {feature_id}", "decisions": [f"Keep {feature_id} in features/"]})],
    ]


def _project(tmp_path: Path) -> tuple[Path, Path]:
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return project, write_spec(tmp_path, 1)


def test_claude_code_builds_a_feature_with_the_same_prompt_and_its_report_reaches_the_context(api_env, tmp_path):
    api_env.plans["feat-01"] = _builds("feat-01")
    project, spec = _project(tmp_path)
    result = run_cli(["run", str(spec), "--agent", "claude-code", *BWRAP, "--json"], cwd=project, fake=api_env,
                     timeout=300)
    assert result.code == 0, result.stderr[-3000:]
    assert (project / "features" / "feat-01.txt").read_text() == "built\n"
    log = subprocess.run(["git", "-C", str(project), "log", "--format=%s"], capture_output=True, text=True).stdout
    assert "orchestrate: feat-01: Feature 1" in log
    calls = [e for e in result.events() if e["type"] == "tool_call"]
    assert [(c["tool"], c["isError"]) for c in calls] == [("Write", False), ("Bash", False), ("report_feature", False)]
    assert [c["turn"] for c in calls] == [1, 2, 3]
    assert any(e["type"] == "api_call" and e["costUsd"] > 0 for e in result.events())  # metered by the proxy
    # The Context Agent has the decision the report carried.
    stores = "".join(path.read_text() for path in (project / ".autonomous" / "context").rglob("*.json"))
    assert "Keep feat-01 in features/" in stores
    # What Claude Code sent: its own tools and ours, its system prompt with the run's appended, our prompt.
    first = next(iter(api_env.agent_requests("feat-01"))).body
    tools = {tool["name"] for tool in first["tools"]}
    assert {"Write", "Bash", "Read", REPORT} <= tools and "str_replace_based_edit_tool" not in tools
    system = json.dumps(first["system"])
    assert "Do not edit the feature's check" in system and "# Project: widget" in system
    prompt = json.dumps(first["messages"][0])
    assert "## Feature" in prompt and "ID: feat-01" in prompt


def test_a_hostile_agent_cannot_write_protected_files_escape_the_project_or_read_the_key(api_env, tmp_path):
    outside = tmp_path / "outside.txt"
    api_env.plans["feat-01"] = [
        [tool_use("Write", {"file_path": "orchestrate.toml", "content": "max_cost = 1000\n"})],
        [tool_use("Edit", {"file_path": ".git/config", "old_string": "[core]", "new_string": "[core]\n\thooksPath = x"})],
        [tool_use("Write", {"file_path": str(outside), "content": "escaped"})],
        [tool_use("Bash", {"command": f"echo escaped > {outside}; echo max_cost = 1000 >> orchestrate.toml; "
                                      "cat ~/.ssh/id_rsa; env", "description": "try"})],
        *_builds("feat-01"),
    ]
    project, spec = _project(tmp_path)
    (project / "orchestrate.toml").write_text("max_turns = 30\n")
    git_config = (project / ".git" / "config").read_text()
    result = run_cli(["run", str(spec), "--agent", "claude-code", *BWRAP, "--json"], cwd=project, fake=api_env,
                     timeout=300)
    calls = [(e["tool"], e["isError"]) for e in result.events() if e["type"] == "tool_call"]
    assert calls[:3] == [("Write", True), ("Edit", True), ("Write", True)], calls
    assert (project / "orchestrate.toml").read_text() == "max_turns = 30\n"
    assert (project / ".git" / "config").read_text() == git_config
    if BWRAP[1] == "bwrap":  # the command meets the sandbox: nothing outside, the config read-only
        assert not outside.exists()
    sent = json.dumps([r.body for r in api_env.requests if r.body])
    assert TEST_KEY not in sent and "PATH=" in sent  # `env` ran, and the real key was not in it
    if BWRAP[1] == "bwrap":  # not even the proxy's dummy key, nor its address (issue 40)
        assert "ANTHROPIC_API_KEY=" not in sent and "ANTHROPIC_BASE_URL=" not in sent
    else:
        assert "ANTHROPIC_API_KEY=orchestrate-proxy-" in sent
    assert result.code == 0, result.stderr[-3000:]


def _processes_in(project: Path) -> list[int]:
    """Processes (any of them) whose working directory is in the project or one of its worktrees:
    the CLI and whatever it started."""
    root, found = project.resolve(), []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cwd = Path(os.readlink(f"/proc/{entry}/cwd"))
            except OSError:
                continue
            if cwd == root or root in cwd.parents:
                found.append(int(entry))
    return found


@pytest.mark.parametrize("stop,jobs", [(signal.SIGINT, 1), (signal.SIGTERM, 2)], ids=["ctrl-c", "sigterm-jobs-2"])
def test_an_interrupt_mid_call_ends_claude_code_too_and_the_run_resumes(api_env, tmp_path, stop, jobs):
    for fid in ("feat-01", "feat-02"):
        api_env.plans[fid] = _builds(fid)
    api_env.latency = 60.0  # the first calls hang until the interrupt
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    spec = write_spec(tmp_path, 2)
    args = ("run", str(spec), "--agent", "claude-code", "--jobs", str(jobs), *BWRAP)
    proc = subprocess.Popen(orchestrate_command(*args), cwd=project, env=cli_env(api_env), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while len(api_env.agent_requests()) < jobs and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert len(api_env.agent_requests()) >= jobs, proc.communicate(timeout=30)
    assert _processes_in(project)  # Claude Code is at work in the project
    proc.send_signal(stop)
    _out, err = proc.communicate(timeout=90)
    assert proc.returncode == 130, err[-3000:]
    time.sleep(0.5)
    assert _processes_in(project) == []  # no orphan CLI, nothing it started
    api_env.latency = 0.0
    resumed = run_cli(list(args), cwd=project, fake=api_env, timeout=300)
    assert resumed.code == 0, resumed.stderr[-3000:]
    assert (project / "features" / "feat-01.txt").exists() and (project / "features" / "feat-02.txt").exists()


def test_without_a_sandbox_the_write_guard_alone_keeps_the_file_tools_off_protected_files(api_env, tmp_path):
    api_env.plans["feat-01"] = [
        [tool_use("Write", {"file_path": "orchestrate.toml", "content": "max_cost = 1000\n"})],
        [tool_use("Write", {"file_path": ".autonomous/state/evil.json", "content": "{}"})],
        [tool_use("Write", {"file_path": str(tmp_path / "outside.txt"), "content": "escaped"})],
        *_builds("feat-01"),
    ]
    project, spec = _project(tmp_path)
    (project / "orchestrate.toml").write_text("max_turns = 30\n")
    result = run_cli(["run", str(spec), "--agent", "claude-code", "--sandbox", "none", "--json"], cwd=project,
                     fake=api_env, timeout=300)
    calls = [(e["tool"], e["isError"]) for e in result.events() if e["type"] == "tool_call"]
    assert calls[:3] == [("Write", True), ("Write", True), ("Write", True)], calls
    assert (project / "orchestrate.toml").read_text() == "max_turns = 30\n"
    assert not (project / ".autonomous" / "state" / "evil.json").exists()
    assert not (tmp_path / "outside.txt").exists()
    denied = json.dumps([r.body for r in api_env.agent_requests("feat-01")])
    assert "is the run's configuration" in denied  # the model is told why, in the editor's words
