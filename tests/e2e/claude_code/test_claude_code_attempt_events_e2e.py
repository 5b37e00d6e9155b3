"""The `api_call` events of a Claude Code run say which attempt of the feature made each call,
as the built-in loop's do: a feature that fails its check once shows its calls under attempt 1,
then under attempt 2 (the retry that fixed it)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from fake_messages_api.scripted_agent.agent_turn import AgentTurn
from fake_messages_api.scripted_agent.plans import Block, edit_create, report, text
from fake_messages_api.server import FakeAPI
from tests.cli_helpers import plain_summarizer, run_cli, write_spec

pytest.importorskip(
    "claude_agent_sdk", reason="the claude-code extra is not installed: pip install 'orchestrate[claude-code]'"
)


def _wrong_then_right(turn: AgentTurn) -> list[Block]:
    """Writes the wrong content on a first attempt, the right one when the failure is fed back."""
    content = "ok\n" if turn.is_retry else "not yet\n"
    steps = [[edit_create(f"features/{turn.feature_id}.txt", content)], [report(f"Wrote {turn.feature_id}")]]
    return steps[turn.step] if turn.step < len(steps) else [text("Done.")]


@pytest.mark.parametrize("agent", ["claude-code", "builtin"])
def test_api_call_events_carry_the_attempt_that_made_the_call(agent: str, fake_api: FakeAPI, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    fake_api.default_plan, fake_api.summarizer = _wrong_then_right, plain_summarizer
    spec = write_spec(project, 1, verify="grep -qx ok features/{id}.txt")

    result = run_cli(["run", str(spec), "--agent", agent, "--sandbox", "none", "--json"], project, fake_api,
                     timeout=600)

    assert result.code == 0, result.stderr[-3000:]
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    calls = [e for e in events if e["type"] == "api_call"]
    attempts = [e["attempt"] for e in calls]
    assert sorted(set(attempts)) == [1, 2], attempts
    assert attempts == sorted(attempts)  # attempt 1's calls, then the retry's
    assert sum(a == 2 for a in attempts) >= 2  # the retry's own calls, not one stray event
