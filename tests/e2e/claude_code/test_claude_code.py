"""Claude Code as the agent, in units: what the SDK is given, what the hook refuses, how the
message stream becomes the attempt, how the CLI is launched, and the missing extra."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("claude_agent_sdk", reason="the claude-code extra is not installed")

from claude_agent_sdk import (
    AssistantMessage,
    ResultMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)

from orchestrator.claude_code import availability
from orchestrator.claude_code.choice import agent_for
from orchestrator.claude_code.guards.write_guard import refusal, unattended, write_guard
from orchestrator.claude_code.session.launch import ApiEndpoint, CliLaunch
from orchestrator.claude_code.session.options import SessionSettings, session_options
from orchestrator.claude_code.session.project_config import ProjectConfig
from orchestrator.claude_code.session.report_server import QUALIFIED_NAME, ReportInbox, report_server
from orchestrator.claude_code.session.stream import StreamRecorder
from orchestrator.config import ConfigError
from orchestrator.config_layers import load_config
from orchestrator.run.attempt.agent_loop import AttemptOutcome
from orchestrator.run.attempt.agent_seam import BUILTIN_AGENT
from orchestrator.safety.bubblewrap.sandbox import NO_SANDBOX, Sandbox
from orchestrator.safety.environment import CommandEnvironment
from orchestrator.tools.context import ToolContext
from orchestrator.tools.shell_policy import ShellPolicy
from orchestrator.user_errors import UsageError


def _tools(workspace: Path, protected: list[Path] = (), sandbox: Sandbox = NO_SANDBOX) -> ToolContext:
    environment = CommandEnvironment(workspace, sandbox, {"PATH": os.environ["PATH"], "LANG": "C.UTF-8"})
    return ToolContext(environment=environment, protected=frozenset(protected), bash_timeout=10,
                       policy=ShellPolicy.default())


def _settings(**changes: object) -> SessionSettings:
    values = {"model": "claude-sonnet-5-5", "max_turns": 7, "system_append": "# Project: widget",
              "claude_settings": "none", "mcp_config": None, **changes}
    return SessionSettings(**values)  # type: ignore[arg-type]


# ---- the options -------------------------------------------------------------------------

def test_each_attempt_is_a_fresh_unattended_session_in_the_workspace(tmp_path):
    tools = _tools(tmp_path)
    options = session_options(_settings(), tools, report_server(ReportInbox()), tmp_path / "claude", {"A": "1"})
    assert options.cwd == str(tmp_path)
    assert options.model == "claude-sonnet-5-5" and options.max_turns == 7
    assert options.continue_conversation is False and options.resume is None and options.session_id is None
    # Claude Code's own system prompt, with the run's rules and project after it
    assert options.system_prompt == {"type": "preset", "preset": "claude_code", "append": "# Project: widget"}
    assert options.setting_sources == []  # no CLAUDE.md, no .claude/settings.json of a cloned repository
    assert options.strict_mcp_config is True
    assert list(options.mcp_servers) == ["orchestrate"] and options.mcp_servers["orchestrate"]["type"] == "sdk"
    assert options.permission_mode != "bypassPermissions" and options.can_use_tool is not None
    assert options.hooks is not None and options.hooks["PreToolUse"]
    assert options.cli_path == str(tmp_path / "claude") and options.env == {"A": "1"}
    assert {"AskUserQuestion", "EnterWorktree", "WebSearch", "CronCreate"} <= set(options.disallowed_tools)


def test_project_settings_and_mcp_servers_only_when_asked(tmp_path):
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"browser": {"command": "npx", "args": ["@playwright/mcp"]},
                                                 "orchestrate": {"command": "evil"}}}))
    project = ProjectConfig({"permissions": {"allow": ["Bash(make:*)"]}}, "Use tabs.")
    options = session_options(_settings(claude_settings="project", mcp_config=config, project=project),
                              _tools(tmp_path), report_server(ReportInbox()), tmp_path / "claude", {})
    assert options.setting_sources == []  # never the live tree's: what the run began with, given here
    assert json.loads(options.settings or "") == {"permissions": {"allow": ["Bash(make:*)"]}, "disableAllHooks": True}
    assert isinstance(options.system_prompt, dict) and options.system_prompt["append"].endswith("Use tabs.")
    assert options.mcp_servers["browser"] == {"command": "npx", "args": ["@playwright/mcp"]}
    assert options.mcp_servers["orchestrate"]["type"] == "sdk"  # a user's server cannot take the report tool's name


def test_an_mcp_config_without_servers_is_refused(tmp_path):
    config = tmp_path / "mcp.json"
    config.write_text("[]")
    with pytest.raises(ValueError, match="mcpServers"):
        session_options(_settings(mcp_config=config), _tools(tmp_path), report_server(ReportInbox()), tmp_path, {})


# ---- report_feature --------------------------------------------------------------------

def test_the_report_tool_keeps_its_name_and_schema_and_lands_in_the_inbox():
    assert QUALIFIED_NAME == "mcp__orchestrate__report_feature"
    inbox = ReportInbox()
    answer = inbox.receive({"summary": "Built it", "decisions": "Use argparse", "constraints": ["Exit 2 on usage"]})
    assert not answer.get("is_error")
    assert inbox.report is not None and inbox.report.decisions == ["Use argparse"]
    refused = inbox.receive({"decisions": []})
    assert refused["is_error"] and "summary: required" in refused["content"][0]["text"]
    assert inbox.report.summary == "Built it"  # a bad second report does not erase the good one


# ---- the write guard ---------------------------------------------------------------------

@pytest.mark.parametrize("tool,path,why", [
    ("Write", ".git/config", ".git/"),
    ("Edit", ".autonomous/state/run.json", ".autonomous/"),
    ("Write", "orchestrate.toml", "orchestrate.toml"),
    ("MultiEdit", "tests/test_feature.py", "protected check file"),
    ("Write", "/etc/passwd", "outside the project"),
    ("Write", "../elsewhere.txt", "outside the project"),
    ("NotebookEdit", ".git/hooks/x.ipynb", ".git/"),
])
def test_writes_to_protected_paths_are_denied(tmp_path, tool, path, why):
    check = tmp_path / "tests" / "test_feature.py"
    check.parent.mkdir()
    check.write_text("def test(): pass\n")
    tools = _tools(tmp_path, [check])
    key = "notebook_path" if tool == "NotebookEdit" else "file_path"
    assert why in (refusal(tool, {key: path}, tools) or "")
    hook = write_guard(tools).hooks[0]
    answer = asyncio.run(hook({"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": {key: path},
                               "tool_use_id": "t", "session_id": "s", "transcript_path": "", "cwd": ""}, "t",
                              {"signal": None}))
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    verdict = asyncio.run(unattended(tools)(tool, {key: path}, None))  # type: ignore[arg-type]
    assert verdict.behavior == "deny"


def test_ordinary_writes_and_other_tools_go_ahead(tmp_path):
    tools = _tools(tmp_path)
    assert refusal("Write", {"file_path": str(tmp_path / "src" / "app.py")}, tools) is None
    assert refusal("Bash", {"command": "rm -rf .git"}, tools) is None  # commands meet the sandbox instead
    hook = write_guard(tools).hooks[0]
    assert asyncio.run(hook({"hook_event_name": "PreToolUse", "tool_name": "Edit", "tool_input": {"file_path": "a.py"},
                             "tool_use_id": "t", "session_id": "s", "transcript_path": "", "cwd": ""}, "t",
                            {"signal": None})) == {}
    assert asyncio.run(unattended(tools)("Bash", {"command": "ls"}, None)).behavior == "allow"  # type: ignore[arg-type]


# ---- the message stream ------------------------------------------------------------------

def test_the_stream_becomes_turns_tool_calls_and_the_attempts_figures():
    outcome, events = AttemptOutcome(stop="end_turn"), []
    recorder = StreamRecorder(outcome, "feat-01", lambda event: events.append((event.type, event.dump())))
    write = ToolUseBlock(id="t1", name="Write", input={"file_path": "/p/a.py", "content": "x"})
    run = ToolUseBlock(id="t2", name="Bash", input={"command": "pytest -q"})
    report = ToolUseBlock(id="t3", name=QUALIFIED_NAME, input={"summary": "Built a.py"})
    for message in [
        AssistantMessage(content=[TextBlock("I will write a.py")], model="m", message_id="msg1"),
        AssistantMessage(content=[write], model="m", message_id="msg1"),  # the same call's next block
        UserMessage(content=[ToolResultBlock(tool_use_id="t1", content="ok")]),
        AssistantMessage(content=[run], model="m", message_id="msg2"),
        UserMessage(content=[ToolResultBlock(tool_use_id="t2", content="1 failed", is_error=True)]),
        AssistantMessage(content=[report], model="m", message_id="msg3"),
        UserMessage(content=[ToolResultBlock(tool_use_id="t3", content="Report received.")]),
        ResultMessage(subtype="success", duration_ms=10, duration_api_ms=5, is_error=False, num_turns=3,
                      session_id="s", total_cost_usd=0.0123, result="Done.",
                      usage={"input_tokens": 100, "output_tokens": 20, "cache_read_input_tokens": 5000,
                             "cache_creation_input_tokens": 700}),
    ]:
        recorder.take(message)
    calls = [data for kind, data in events if kind == "tool_call"]
    assert [(c["turn"], c["tool"], c["summary"], c["isError"]) for c in calls] == [
        (1, "Write", "/p/a.py", False), (2, "Bash", "pytest -q", True), (3, "report_feature", "Built a.py", False),
    ]
    assert outcome.turns == 3 and outcome.tool_calls == 3
    assert outcome.tool_lines == ["Write: /p/a.py", "Bash: pytest -q (error)", "report_feature: Built a.py"]
    assert outcome.usage.cache_read == 5000 and outcome.usage.cache_write == 700 and outcome.cost_usd == 0.0123
    assert outcome.stop == "end_turn" and outcome.final_text == "Done." and outcome.error is None


def test_a_session_that_ran_out_of_turns_says_so():
    outcome = AttemptOutcome(stop="end_turn")
    StreamRecorder(outcome, "f", lambda _event: None).take(ResultMessage(
        subtype="error_max_turns", duration_ms=1, duration_api_ms=1, is_error=True, num_turns=40, session_id="s"))
    assert outcome.stop == "max_turns" and "error_max_turns" in (outcome.error or "")


# ---- the launch --------------------------------------------------------------------------

def test_the_cli_gets_the_attempts_environment_only_in_a_session_of_its_own(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-the-real-key")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    shown = tmp_path / "env.json"
    cli = tmp_path / "fake-claude"
    cli.write_text(f"#!{sys.executable}\nimport json, os, sys\n"
                   f"json.dump({{'env': dict(os.environ), 'argv': sys.argv[1:], 'own_group': os.getpgid(0) == os.getpid()}},"
                   f" open({str(shown)!r}, 'w'))\n")
    cli.chmod(0o755)
    environment = CommandEnvironment(tmp_path, NO_SANDBOX, {"PATH": os.environ["PATH"]})
    with CliLaunch(cli, environment, ApiEndpoint("http://127.0.0.1:9", "dummy-key"),
                   max_output_tokens=8192) as launch:
        home = launch.home
        # the SDK starts the wrapper with our whole environment and its own variables merged in
        parent_env = {**os.environ, **launch.variables, "CLAUDE_AGENT_SDK_VERSION": "0.2.189"}
        subprocess.run([str(launch.wrapper), "--output-format", "stream-json"], env=parent_env, check=True)
    seen = json.loads(shown.read_text())
    env = seen["env"]
    assert env["ANTHROPIC_API_KEY"] == "dummy-key" and env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"
    assert "AWS_SECRET_ACCESS_KEY" not in env
    assert env["HOME"] == str(home) and env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
    assert env["CLAUDE_CODE_MAX_OUTPUT_TOKENS"] == "8192"
    assert env["CLAUDE_AGENT_SDK_VERSION"] == "0.2.189" and "ORCHESTRATE_CMD_ID" in env
    assert seen["argv"] == ["--output-format", "stream-json"] and seen["own_group"] is True
    assert not home.exists()  # the attempt's home goes with it


def test_in_the_sandbox_the_cli_reaches_the_endpoints_port_and_the_protected_paths_stay_read_only(tmp_path):
    sandbox = Sandbox("bwrap", "test", bwrap="/usr/bin/bwrap")
    environment = CommandEnvironment(tmp_path, sandbox, {"PATH": "/usr/bin"})
    (tmp_path / ".git").mkdir()
    with CliLaunch(tmp_path / "claude", environment, ApiEndpoint("http://127.0.0.1:4321", "dummy"),
                   max_output_tokens=8192) as launch:
        argv = launch.argv
    assert "--unshare-net" in argv and "--forward" in argv and argv[argv.index("--forward") + 1] == "4321"
    assert ["--ro-bind", str(tmp_path / ".git"), str(tmp_path / ".git")] == argv[argv.index(str(tmp_path / ".git")) - 1:][:3]
    assert argv[-1] == str(tmp_path / "claude")


# ---- choosing the agent, and the missing extra ---------------------------------------------

def test_the_agent_comes_from_flags_environment_and_file(tmp_path):
    assert load_config({}, tmp_path, {}).agent == "builtin"
    assert load_config({}, tmp_path, {"ORCHESTRATE_AGENT": "claude-code"}).agent == "claude-code"
    (tmp_path / "orchestrate.toml").write_text('agent = "claude-code"\nclaude-settings = "project"\n')
    config = load_config({}, tmp_path, {})
    assert config.agent == "claude-code" and config.claude_settings == "project"
    with pytest.raises(ConfigError, match="replay"):
        load_config({"context": "replay"}, tmp_path, {})
    assert agent_for(load_config({"agent": "builtin"}, tmp_path, {})) is BUILTIN_AGENT


def test_without_the_sdk_claude_code_is_a_usage_error_naming_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "claude_agent_sdk", None)  # as if it were not installed
    with pytest.raises(UsageError, match=r"pip install 'orchestrate\[claude-code\]'"):
        agent_for(load_config({"agent": "claude-code"}, tmp_path, {}))
    assert availability.sdk_version() is None
    line, runnable = availability.describe_agent("claude-code")
    assert not runnable and "orchestrate[claude-code]" in line


def test_a_missing_mcp_config_file_stops_the_run_before_it_starts(tmp_path):
    with pytest.raises(UsageError, match="no such file"):
        agent_for(load_config({"agent": "claude-code", "mcp_config": str(tmp_path / "none.json")}, tmp_path, {}))


def test_doctor_names_the_agent_its_versions_and_who_pays(tmp_path):
    from orchestrator.commands.doctor import diagnose

    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    rows, healthy = diagnose(tmp_path, {"agent": "claude-code", "sandbox": "none"}, env)
    shown = dict(rows)
    assert shown["agent"].startswith("claude-code: Claude Agent SDK ") and "Claude Code 2." in shown["agent"]
    assert "your Claude plan" in shown["billing"] and "per attempt, not per call" in shown["billing"] and healthy
    rows, _ = diagnose(tmp_path, {"agent": "claude-code", "sandbox": "none"}, {**env, "ANTHROPIC_API_KEY": "sk-x"})
    assert "metered by orchestrate" in dict(rows)["billing"] and "sk-x" not in json.dumps(rows)
    rows, _ = diagnose(tmp_path, {"agent": "claude-code", "sandbox": "none", "provider": "bedrock"}, env)
    assert dict(rows)["billing"].startswith("Amazon Bedrock (your AWS account), metered by orchestrate")
    rows, healthy = diagnose(tmp_path, {"agent": "claude-code", "sandbox": "none"}, {**env, "CLAUDE_CODE_USE_VERTEX": "1"})
    assert dict(rows)["billing"].startswith("unusable") and "--provider vertex" in dict(rows)["billing"] and not healthy
