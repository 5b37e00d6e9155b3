"""`--agent claude-code`, a session that ends its turn without `report_feature` (issue 42 item
6): it is reminded once, in the same session, as the built-in agent is; one that still does not
report has its final text taken as the attempt's summary, so the retry and the summarizer hear
it. The real bundled Claude Code CLI, driven by the fake Messages API."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from fake_messages_api.scripted_agent.plans import text, tool_use
from fake_messages_api.server import FakeAPI
from tests.cli_helpers import run_cli, write_spec

pytest.importorskip("claude_agent_sdk", reason="the claude-code extra is not installed")

BWRAP = ["--sandbox", "bwrap"] if shutil.which("bwrap") else ["--sandbox", "none"]
FINAL = "Wrote features/feat-01.txt with the word built; the check looks for that file."
REMINDED = "without calling `report_feature`"


def _run(api_env: FakeAPI, tmp_path: Path) -> tuple[Path, dict]:
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    spec = write_spec(tmp_path, 1)
    result = run_cli(["run", str(spec), "--agent", "claude-code", *BWRAP], cwd=project, fake=api_env, timeout=300)
    assert result.code == 0, result.stderr[-3000:]
    return project, json.loads((project / ".autonomous" / "logs" / "feat-01.json").read_text())


def test_a_turn_ended_without_a_report_is_reminded_once_and_the_report_then_made_counts(api_env, tmp_path):
    api_env.plans["feat-01"] = [
        [tool_use("Write", {"file_path": "features/feat-01.txt", "content": "built\n"})],
        [text(FINAL)],  # the turn ends: no report_feature
        [tool_use("mcp__orchestrate__report_feature", {"summary": "Built feat-01", "decisions": ["Keep it plain"]})],
        [text("Reported.")],
    ]

    _project, log = _run(api_env, tmp_path)

    assert log["report"]["summary"] == "Built feat-01" and log["report"]["decisions"] == ["Keep it plain"]
    reminders = [r for r in api_env.agent_requests("feat-01") if REMINDED in json.dumps(r.body["messages"][-1])]
    assert reminders and len({len(r.body["messages"]) for r in reminders}) == 1  # one reminder, in the same session
    assert FINAL in json.dumps(reminders[0].body["messages"])  # it follows the turn it reminds
    # The attempt's record adds up both turns of the session (each result gives its own turn's usage).
    tokens, agent = log["attemptHistory"][-1]["tokens"], api_env.usage.agent
    assert (tokens["output"], tokens["cacheRead"]) == (agent.output_tokens, agent.cache_read_input_tokens)


def test_a_session_that_never_reports_has_its_final_text_as_the_summary(api_env, tmp_path):
    api_env.plans["feat-01"] = [
        [tool_use("Write", {"file_path": "features/feat-01.txt", "content": "built\n"})],
        [text("Nothing to add.")],
        [text(FINAL)],  # reminded, it still does not report
    ]

    _project, log = _run(api_env, tmp_path)

    assert log["report"]["summary"] == FINAL
    assert "did not call report_feature" in log["report"]["notes"]
    summarizer = [json.dumps(r.body) for r in api_env.requests if r.kind == "summarizer"]
    assert summarizer and FINAL in summarizer[-1]  # the summarizer hears it, not only the status
