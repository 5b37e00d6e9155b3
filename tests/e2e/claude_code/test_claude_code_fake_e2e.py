"""The packaged fake drives the REAL bundled Claude Code CLI, with no orchestrate in between.

The Agent SDK's `query()` starts the CLI the `claude-agent-sdk` wheel ships, pointed at the fake
with a dummy key, an empty home and no nonessential traffic: no network is used. The fake plays
the demo's textkit script, said in Claude Code's tools; the files the CLI's `Write` produced,
the check its `Bash` ran and the report its in-process MCP tool received are what we check.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fake_messages_api.server import FakeAPI
from orchestrator.demo.textkit_plan import textkit_plan
from tests.fake_api_fixtures import running_fake_api

sdk = pytest.importorskip(
    "claude_agent_sdk", reason="the claude-code extra is not installed: pip install 'orchestrate[claude-code]'"
)

REPO_ROOT = Path(__file__).resolve().parents[3]
TEXTKIT = REPO_ROOT / "specs" / "textkit"
REPORT_TOOL = "mcp__orchestrate__report_feature"
REPORT_SCHEMA = {
    "type": "object",
    "properties": {
        "summary": {"type": "string"}, "decisions": {"type": "array", "items": {"type": "string"}},
        "constraints": {"type": "array", "items": {"type": "string"}}, "notes": {"type": "string"},
    },
    "required": ["summary"],
}


def _options(fake: FakeAPI, project: Path, home: Path, reports: list[dict[str, Any]]) -> Any:
    @sdk.tool("report_feature", "Report what the feature did.", REPORT_SCHEMA)
    async def report_feature(args: dict[str, Any]) -> dict[str, Any]:
        reports.append(args)
        return {"content": [{"type": "text", "text": "recorded"}]}

    return sdk.ClaudeAgentOptions(
        cwd=str(project),
        # acceptEdits and an allow-list, not bypassPermissions: the CLI refuses that as root.
        permission_mode="acceptEdits",
        allowed_tools=["Read", "Write", "Edit", "Bash", REPORT_TOOL],
        mcp_servers={"orchestrate": sdk.create_sdk_mcp_server("orchestrate", tools=[report_feature])},
        env={
            "HOME": str(home), "ANTHROPIC_BASE_URL": fake.base_url, "ANTHROPIC_API_KEY": "dummy",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "ORCHESTRATE_SPEC_DIR": str(TEXTKIT),
        },
    )


async def _run(prompt: str, options: Any) -> list[Any]:
    return [message async for message in sdk.query(prompt=prompt, options=options)]


def test_the_real_claude_code_cli_writes_runs_and_reports_what_the_fake_scripts(tmp_path: Path) -> None:
    import anyio

    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    (project / "pyproject.toml").write_text("# an old file: Write must Read it first\n")
    reports: list[dict[str, Any]] = []
    prompt = "## Feature\nID: package-skeleton\nName: Package skeleton\n"

    with running_fake_api(default_plan=textkit_plan) as fake:
        messages = anyio.run(_run, prompt, _options(fake, project, home, reports))
        agent_calls = fake.agent_requests("package-skeleton")

    result = messages[-1]
    assert isinstance(result, sdk.ResultMessage) and not result.is_error, result
    assert (project / "textkit" / "__init__.py").read_text().startswith('"""textkit: small text utilities')
    assert 'dependencies = []' in (project / "pyproject.toml").read_text()  # overwritten: it was Read first
    tool_results = [
        block for m in messages if isinstance(m, sdk.UserMessage) and isinstance(m.content, list)
        for block in m.content if isinstance(block, sdk.ToolResultBlock)
    ]
    assert any("3 passed" in str(block.content) and not block.is_error for block in tool_results)  # the Bash check
    assert [r["summary"] for r in reports] == [
        "Flat-layout textkit package with pyproject.toml (setuptools), version 0.1.0."
    ]
    assert reports[0]["decisions"] == ["flat layout: textkit/ at the project root, setuptools build backend"]
    # Every call the CLI made was a streamed Messages call with Claude Code's own tools.
    assert all(r.body.get("stream") is True and r.path == "/v1/messages" for r in agent_calls)
    assert {"Bash", "Read", "Write", "Edit"} <= {t["name"] for t in agent_calls[-1].body["tools"]}
