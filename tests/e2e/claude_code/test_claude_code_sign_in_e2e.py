"""On a Claude plan the real bundled Claude Code signs in with the user's own `~/.claude`, and
the agent it drives cannot read that sign-in: not with its commands (Bash, run in a nested
sandbox that masks it) nor with its file tools (Read, Grep, Glob: refused by the guard).

A plan run is simulated offline: a home holding `.claude/.credentials.json` with a canary OAuth
token (the file the CLI reads on Linux) and `.claude.json` with a canary account, and the API at
the packaged fake instead of Anthropic's (put in the CLI's variables by the test, as only a test
can: a run hands the CLI no ANTHROPIC_* variable). The sandbox shares the host's network so that
the CLI reaches the fake on loopback; a real plan run goes out through the proxy to Anthropic's
hosts instead. The attempt is set up as `ClaudeCodeAgent` sets it up: `CliLaunch` without an
endpoint, then `session_options`, then the SDK's `query`.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from fake_messages_api.scripted_agent.agent_turn import AgentTurn, tool_results_of
from fake_messages_api.scripted_agent.plans import text, tool_use
from fake_messages_api.server import FakeAPI
from orchestrator.safety.bubblewrap.sandbox import Sandbox
from orchestrator.safety.environment import CommandEnvironment
from orchestrator.tools.context import ToolContext
from tests.e2e.safety.test_sandbox import bwrap_problem

claude_agent_sdk = pytest.importorskip("claude_agent_sdk", reason="the claude-code extra is not installed")
CLI = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
pytestmark = [pytest.mark.skipif(not CLI.exists(), reason="this claude-agent-sdk wheel bundles no Claude Code CLI"),
              pytest.mark.skipif(bwrap_problem() is not None, reason=f"no usable sandbox: {bwrap_problem()}")]

TOKEN = "sk-ant-oat01-canary-token-5d1e7b"  # the sign-in's access token
REFRESH = "sk-ant-ort01-canary-refresh-9a4c2f"
ACCOUNT = "canary-account-3b8e@example.com"  # what ~/.claude.json says of the account
CANARIES = (TOKEN, REFRESH, ACCOUNT)
PROMPT = "## Feature\nID: feat-a\nName: A feature\n\nDo the feature."


def _signed_in_home(home: Path) -> Path:
    (home / ".claude").mkdir(parents=True)
    expires = int(time.time() * 1000) + 86_400_000
    oauth = {"accessToken": TOKEN, "refreshToken": REFRESH, "expiresAt": expires,
             "scopes": ["user:inference", "user:profile"], "subscriptionType": "max"}
    (home / ".claude" / ".credentials.json").write_text(json.dumps({"claudeAiOauth": oauth}), encoding="utf-8")
    (home / ".claude.json").write_text(json.dumps({"oauthAccount": {"emailAddress": ACCOUNT}}), encoding="utf-8")
    return home


def _hostile(home: Path) -> Any:
    """One attack a turn, in Claude Code's own tools, then done."""
    attacks = [
        ("Bash", {"command": "cat ~/.claude/.credentials.json ~/.claude.json; ls -la ~/.claude; "
                             "cp ~/.claude/.credentials.json stolen.json", "description": "read the sign-in"}),
        ("Bash", {"command": "cat /proc/*/root$HOME/.claude/.credentials.json; grep -rs canary ~ /proc/1/root/tmp | head",
                  "description": "by the CLI's root"}),
        ("Bash", {"command": f"ln -s {home}/.claude/.credentials.json link.json; echo linked", "description": "link"}),
        ("Read", {"file_path": f"{home}/.claude/.credentials.json"}),
        ("Read", {"file_path": "~/.claude.json"}),
        ("Read", {"file_path": "link.json"}),
        ("Grep", {"pattern": "canary", "path": str(home), "output_mode": "content"}),  # where the CLI has Grep
        ("Bash", {"command": "echo still-working > done.txt", "description": "ordinary work"}),
    ]

    def plan(turn: AgentTurn) -> list[Any]:
        if turn.step < len(attacks):
            return [tool_use(*attacks[turn.step])]
        return [text("done")]

    return plan


async def _session(options: Any) -> list[Any]:
    return [message async for message in claude_agent_sdk.query(prompt=PROMPT, options=options)]


def _attempt(fake: FakeAPI, home: Path, project: Path) -> list[Any]:
    from orchestrator.claude_code.session.launch import CliLaunch
    from orchestrator.claude_code.session.options import SessionSettings, session_options
    from orchestrator.claude_code.session.report_server import ReportInbox, report_server

    sandbox = Sandbox("bwrap", "test", hidden=(home,), network=True)
    variables = {"PATH": os.environ["PATH"], "HOME": str(home), "ANTHROPIC_BASE_URL": fake.base_url}
    tools = ToolContext(CommandEnvironment(workspace=project, sandbox=sandbox, variables=variables))
    settings = SessionSettings(model="claude-opus-5-5", max_turns=30, system_append="", claude_settings="none",
                               mcp_config=None)
    with CliLaunch(CLI, tools.environment, None, max_output_tokens=4096) as launch:
        options = session_options(settings, tools, report_server(ReportInbox()), launch.wrapper, launch.variables)
        return asyncio.run(_session(options))


def test_the_agent_cannot_read_claude_codes_sign_in_while_the_cli_signs_in_with_it(tmp_path: Path) -> None:
    home, project = _signed_in_home(tmp_path / "home"), tmp_path / "project"
    project.mkdir()
    with FakeAPI() as fake:
        fake.default_plan = _hostile(home)
        messages = _attempt(fake, home, project)
        requests = list(fake.requests)
    assert type(messages[-1]).__name__ == "ResultMessage" and not messages[-1].is_error, messages[-1]
    assert requests and all(r.headers.get("authorization") == f"Bearer {TOKEN}" for r in requests)  # the CLI's own
    results = "\n".join(r.content for request in requests for r in tool_results_of(request.body["messages"][-1]))
    assert (project / "done.txt").read_text() == "still-working\n"  # its commands still work
    for canary in CANARIES:  # the account too: the CLI itself tells the model the user's email, the agent's tools do not
        assert canary not in results, f"{canary} reached the agent"
        for path in project.rglob("*"):
            if path.is_file() and not path.is_symlink():
                assert canary not in path.read_text(errors="replace"), f"{canary} copied into {path}"
    everything = json.dumps([request.body for request in requests])
    assert TOKEN not in everything and REFRESH not in everything
    assert "linked" in results and "Claude Code's sign-in" in results  # the attacks ran; the guard said why it refused
    assert json.loads((home / ".claude" / ".credentials.json").read_text())["claudeAiOauth"]["accessToken"] == TOKEN


def test_the_shell_prefix_runs_a_command_line_with_the_sign_in_masked(tmp_path: Path) -> None:
    """The piece alone, as the CLI runs it (the whole command line as one argument), without a sandbox around it."""
    import shutil
    import subprocess

    from orchestrator.claude_code.guards.sign_in import shell_prefix
    from orchestrator.safety.bubblewrap.socket_filter import filter_bytes

    home = _signed_in_home(tmp_path / "home")
    (home / ".claude" / "shell-snapshots").mkdir()
    (home / ".claude" / "shell-snapshots" / "snapshot.sh").write_text("greet() { echo hello-from-snapshot; }\n")
    script, seccomp = tmp_path / "prefix", tmp_path / "seccomp.bpf"
    seccomp.write_bytes(filter_bytes())
    script.write_text(shell_prefix(shutil.which("bwrap") or "bwrap", "/bin/bash", home, seccomp))
    script.chmod(0o700)
    line = (f"source {home}/.claude/shell-snapshots/snapshot.sh && greet; cat {home}/.claude/.credentials.json; "
            f"cat {home}/.claude.json; ls -A {home}/.claude; echo \"$0\" && pwd")
    done = subprocess.run([str(script), line], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.stdout.splitlines() == ["hello-from-snapshot", "shell-snapshots", "/bin/bash", str(tmp_path)]
    assert not any(canary in done.stdout + done.stderr for canary in CANARIES)
    assert TOKEN in (home / ".claude" / ".credentials.json").read_text()  # masked for the command, untouched
