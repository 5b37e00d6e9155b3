"""`orchestrate run --agent claude-code --max-cost USD` on `specs/textkit` with the real bundled
Claude Code: the run stops at the cap (exit 3), never past it, and what it recorded is what the
fake billed, to the cent (every call went through the metering proxy)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from fake_messages_api.server import FakeAPI
from orchestrator.demo.scripted import demo_summarizer
from orchestrator.demo.textkit_plan import textkit_plan
from orchestrator.llm.costs.pricing import PriceTable, TokenUsage
from tests.cli_helpers import REPO_ROOT, run_cli
from tests.fake_api_fixtures import running_fake_api

pytest.importorskip(
    "claude_agent_sdk", reason="the claude-code extra is not installed: pip install 'orchestrate[claude-code]'"
)
pytestmark = pytest.mark.slow

SPEC = REPO_ROOT / "specs" / "textkit" / "spec.json"
CAP = 0.40  # a full textkit run with Claude Code costs about $1.20 at the default model's price


def _billed(fake: FakeAPI) -> float:
    """What the fake charged: every answered call at its model's list price."""
    prices, total = PriceTable(), 0.0
    for r in fake.requests:
        if r.status == 200 and r.response and "usage" in r.response:
            usage = r.response["usage"]
            total += prices.cost(r.body["model"], TokenUsage(
                input=usage.get("input_tokens", 0), output=usage.get("output_tokens", 0),
                cache_read=usage.get("cache_read_input_tokens") or 0,
                cache_write=usage.get("cache_creation_input_tokens") or 0))
    return total


def test_max_cost_holds_to_the_cent_against_the_fakes_bill(tmp_path: Path) -> None:
    project = tmp_path / "textkit"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    with running_fake_api(default_plan=textkit_plan, summarizer=demo_summarizer) as fake:
        result = run_cli(["run", str(SPEC), "--agent", "claude-code", "--max-cost", f"{CAP}", "--json"], project, fake,
                         timeout=900)
        billed = _billed(fake)
        agent_calls = len(fake.agent_requests())

    assert result.code == 3, result.stderr[-3000:]
    status = run_cli(["status", "--json"], project, None)
    assert status.code == 0, status.stderr
    recorded = json.loads(status.stdout)["totals"]["costUsd"]
    assert agent_calls >= 5, "the cap was hit before Claude Code did any work"
    assert billed <= CAP and recorded <= CAP
    assert round(recorded, 2) == round(billed, 2) and recorded >= billed - 1e-9, (recorded, billed)
    passed = [fid for fid, f in json.loads(status.stdout)["features"].items() if f["status"] == "passed"]
    assert 1 <= len(passed) < 8
