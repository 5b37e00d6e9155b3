"""`--agent claude-code`, a session that ends without `report_feature` (issue 42 item 6): its
final text is taken as the attempt's summary, so the retry and the Context Agent still hear it.
The real bundled Claude Code CLI, driven by the fake Messages API."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from orchestrator.demo.fake_api.plans import text, tool_use
from tests.cli_helpers import run_cli, write_spec

pytest.importorskip("claude_agent_sdk", reason="the claude-code extra is not installed")

BWRAP = ["--sandbox", "bwrap"] if shutil.which("bwrap") else ["--sandbox", "none"]
FINAL = "Wrote features/feat-01.txt with the word built; the check looks for that file."


def test_a_session_ended_without_a_report_has_its_final_text_as_the_summary(api_env, tmp_path: Path):
    api_env.plans["feat-01"] = [
        [tool_use("Write", {"file_path": "features/feat-01.txt", "content": "built\n"})],
        [text(FINAL)],  # the turn ends: no report_feature
    ]
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    spec = write_spec(tmp_path, 1)

    result = run_cli(["run", str(spec), "--agent", "claude-code", *BWRAP], cwd=project, fake=api_env, timeout=300)

    assert result.code == 0, result.stderr[-3000:]
    log = json.loads((project / ".autonomous" / "logs" / "feat-01.json").read_text())
    assert log["report"]["summary"] == FINAL
    assert "did not call report_feature" in log["report"]["notes"]
    summarizer = [json.dumps(r.body) for r in api_env.requests if r.kind == "summarizer"]
    assert summarizer and FINAL in summarizer[-1]  # the summarizer hears it, not only the status
