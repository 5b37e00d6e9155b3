"""`orchestrate run --agent claude-code --provider bedrock|vertex` with the real bundled Claude Code:
every call reaches the fake's Bedrock or Vertex route with the provider's model id, signed or
authorized by orchestrate's own SDK client, the recorded spend is the fake's bill, `--max-cost`
stops the run without overshoot, and no AWS or Google secret is ever in the agent's reach."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fake_messages_api.cloud_providers import TEST_AWS_ACCESS_KEY, TEST_AWS_SECRET_KEY, TEST_VERTEX_TOKEN
from fake_messages_api.scripted_agent.agent_turn import AgentTurn
from fake_messages_api.scripted_agent.plans import Block, bash, edit_create, report, text
from fake_messages_api.server import FakeAPI
from orchestrator.llm.costs.pricing import PriceTable, TokenUsage
from tests.cli_helpers import plain_summarizer, run_cli, write_spec

pytest.importorskip(
    "claude_agent_sdk", reason="the claude-code extra is not installed: pip install 'orchestrate[claude-code]'"
)

SESSION_TOKEN = "FwoGZXIvYXdzEFAKESESSIONTOKEN0123456789abcdef"
MODEL, SUMMARIZER = "claude-sonnet-4-5", "claude-haiku-4-5"
NATIVE = {  # the provider's id of each model -> the id it is priced by
    "anthropic.claude-sonnet-4-5-20250929-v1:0": MODEL, "anthropic.claude-haiku-4-5-20251001-v1:0": SUMMARIZER,
    "claude-sonnet-4-5@20250929": MODEL, "claude-haiku-4-5@20251001": SUMMARIZER,
}
AGENT_PATH = {
    "bedrock": "/model/anthropic.claude-sonnet-4-5-20250929-v1:0/invoke-with-response-stream",
    "vertex": "/v1/projects/proj-1/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict",
}
SECRETS = {"bedrock": [TEST_AWS_SECRET_KEY, SESSION_TOKEN], "vertex": [TEST_VERTEX_TOKEN]}


def _environment(provider: str, fake: FakeAPI) -> dict[str, str]:
    """The run's cloud credentials and the fake's provider endpoints, as a user of each sets them."""
    if provider == "bedrock":
        return {"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": TEST_AWS_ACCESS_KEY,
                "AWS_SECRET_ACCESS_KEY": TEST_AWS_SECRET_KEY, "AWS_SESSION_TOKEN": SESSION_TOKEN,
                "AWS_EC2_METADATA_DISABLED": "true", "ANTHROPIC_BEDROCK_BASE_URL": fake.base_url}
    return {"CLOUD_ML_REGION": "us-east5", "ANTHROPIC_VERTEX_PROJECT_ID": "proj-1",
            "GOOGLE_OAUTH_ACCESS_TOKEN": TEST_VERTEX_TOKEN, "ANTHROPIC_VERTEX_BASE_URL": fake.base_url + "/v1"}


def _nosy(turn: AgentTurn) -> list[Block]:
    """Looks at its environment and its parent's (the Claude Code CLI's), then builds the feature."""
    fid = turn.feature_id
    steps = [
        [bash(f"env > env-{fid}.txt; cat /proc/$PPID/environ | tr '\\0' '\\n' > parent-{fid}.txt; true")],
        [edit_create(f"features/{fid}.txt", "ok\n")],
        [report(f"Implemented {fid}")],
    ]
    return steps[turn.step] if turn.step < len(steps) else [text("Done.")]


def _billed(fake: FakeAPI) -> float:
    """What the fake charged: every answered call at its model's list price."""
    prices, total = PriceTable(), 0.0
    for r in fake.requests:
        usage: dict[str, Any] = (r.response or {}).get("usage") or {}
        if r.status == 200 and usage:
            total += prices.cost(NATIVE[r.body["model"]], TokenUsage(
                input=usage.get("input_tokens", 0), output=usage.get("output_tokens", 0),
                cache_read=usage.get("cache_read_input_tokens") or 0,
                cache_write=usage.get("cache_creation_input_tokens") or 0))
    return total


def _run(project: Path, fake: FakeAPI, provider: str, features: int, *args: str) -> tuple[Any, dict[str, Any]]:
    spec = write_spec(project, features)
    result = run_cli(["run", str(spec), "--agent", "claude-code", "--provider", provider, "--model", MODEL,
                      "--summarizer-model", SUMMARIZER, "--sandbox", "none", "--json", *args], project, key=None,
                     timeout=600, **_environment(provider, fake))
    status = run_cli(["status", "--json"], project, None)
    assert status.code == 0, status.stderr
    return result, json.loads(status.stdout)


@pytest.mark.parametrize("provider", ["bedrock", "vertex"])
def test_claude_code_on_a_cloud_provider_builds_the_features_billed_exactly_and_never_sees_its_secrets(
    provider: str, fake_api: FakeAPI, tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    fake_api.default_plan, fake_api.summarizer = _nosy, plain_summarizer

    result, status = _run(project, fake_api, provider, 2)

    assert result.code == 0, result.stderr[-3000:]
    assert {fid: f["status"] for fid, f in status["features"].items()} == {"feat-01": "passed", "feat-02": "passed"}
    agent = fake_api.agent_requests()
    assert len(agent) >= 6 and all(r.provider == provider and r.status == 200 for r in fake_api.requests)
    assert {r.path for r in agent} == {AGENT_PATH[provider]}  # Claude Code's calls, under the provider's model id
    assert status["totals"]["costUsd"] == pytest.approx(_billed(fake_api), abs=1e-6)
    assert status["totals"]["apiCalls"] == len([r for r in fake_api.requests if r.status == 200])
    for fid in ("feat-01", "feat-02"):
        seen = (project / f"env-{fid}.txt").read_text() + (project / f"parent-{fid}.txt").read_text()
        assert "ANTHROPIC_BASE_URL=http://127.0.0.1:" in seen  # the files hold what the agent could read
        assert not any(secret in seen for secret in SECRETS[provider]), fid
        assert "AWS_ACCESS_KEY_ID" not in seen and "GOOGLE_OAUTH_ACCESS_TOKEN" not in seen


def test_max_cost_on_bedrock_stops_claude_code_without_overshoot(fake_api: FakeAPI, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    fake_api.default_plan, fake_api.summarizer = _nosy, plain_summarizer
    cap = 0.40

    result, status = _run(project, fake_api, "bedrock", 8, "--max-cost", str(cap))

    assert result.code == 3, result.stderr[-3000:]
    billed, recorded = _billed(fake_api), status["totals"]["costUsd"]
    assert len(fake_api.agent_requests()) >= 3, "the cap was hit before Claude Code did any work"
    assert billed <= cap and recorded <= cap
    assert recorded == pytest.approx(billed, abs=1e-6)
    assert all(r.provider == "bedrock" for r in fake_api.requests)
