"""Claude Code at its real cost: its requests keep the prompt cache from one attempt to the next,
and think only as the run says (the real bundled CLI, offline, against the fake Messages API)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fake_messages_api.scripted_agent.plans import tool_use
from tests.cli_helpers import run_cli, write_spec

pytest.importorskip("claude_agent_sdk", reason="the claude-code extra is not installed")

REPORT = "mcp__orchestrate__report_feature"
MODEL = "claude-sonnet-4-5"  # takes a thinking budget, or none
SANDBOX = ["--sandbox", "bwrap"] if shutil.which("bwrap") else ["--sandbox", "none"]


def _builds(feature_id: str) -> list[list[dict[str, Any]]]:
    return [[tool_use("Write", {"file_path": f"features/{feature_id}.txt", "content": "built\n"})],
            [tool_use(REPORT, {"summary": f"Built {feature_id}"})]]


def _run(api_env: Any, tmp_path: Path, *flags: str) -> None:
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    spec = write_spec(tmp_path, 2)
    for feature_id in ("feat-01", "feat-02"):
        api_env.plans[feature_id] = _builds(feature_id)
    result = run_cli(["run", str(spec), "--agent", "claude-code", "--model", MODEL, *SANDBOX, *flags], cwd=project, fake=api_env,
                     timeout=300)
    assert result.code == 0, result.stderr[-3000:]


def test_two_attempts_send_the_same_system_prompt_and_no_thinking_by_default(api_env: Any, tmp_path: Path) -> None:
    _run(api_env, tmp_path)

    firsts = [api_env.agent_requests(feature_id)[0].body for feature_id in ("feat-01", "feat-02")]
    # Each attempt is a fresh session with a fresh home, at the same path: the cached prefix holds.
    assert json.dumps(firsts[0]["system"]) == json.dumps(firsts[1]["system"])
    sent = [r.body for feature_id in ("feat-01", "feat-02") for r in api_env.agent_requests(feature_id)]
    assert sent and all((body.get("thinking") or {"type": "disabled"})["type"] == "disabled" for body in sent), (
        [body.get("thinking") for body in sent])


def test_the_runs_thinking_budget_reaches_claude_codes_requests(api_env: Any, tmp_path: Path) -> None:
    _run(api_env, tmp_path, "--thinking", "2048")

    sent = [r.body for r in api_env.agent_requests("feat-01")]
    thinking = [body.get("thinking") or {} for body in sent]
    assert sent and all((t.get("type"), t.get("budget_tokens")) == ("enabled", 2048) for t in thinking), thinking
