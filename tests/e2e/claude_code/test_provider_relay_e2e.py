"""The real Claude Code CLI through the metering proxy to the packaged fake's Bedrock route (the
proxy's `ProviderUpstream`): an error the provider answers reaches the CLI with its status, in
the Anthropic API's error shape, and is booked at nothing; a stream the provider cuts breaks the
CLI's stream and is booked at its worst case; Claude Code's own retry then gets the answer."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import anthropic
import pytest

from fake_messages_api.cloud_providers import TEST_AWS_ACCESS_KEY, TEST_AWS_SECRET_KEY
from fake_messages_api.faults import FailCalls, Fault
from fake_messages_api.server import FakeAPI
from orchestrator.claude_code.metering.metering_proxy import MeteringProxy
from orchestrator.claude_code.metering.provider_relay import ProviderUpstream
from tests.e2e.claude_code.test_metering_proxy_e2e import Books, _billed

claude_agent_sdk = pytest.importorskip("claude_agent_sdk", reason="the claude-code extra is not installed")
CLI = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
pytestmark = pytest.mark.skipif(not CLI.exists(), reason="this claude-agent-sdk wheel bundles no Claude Code CLI")
PROMPT = "## Feature\nID: feat-a\nName: A feature\n\nDo the feature."
MODEL = "claude-sonnet-4-5"


def _bedrock(fake: FakeAPI) -> ProviderUpstream:
    sdk = anthropic.AnthropicBedrock(aws_region="us-east-1", aws_access_key=TEST_AWS_ACCESS_KEY,
                                     aws_secret_key=TEST_AWS_SECRET_KEY, base_url=fake.base_url)
    return ProviderUpstream.of("bedrock", sdk)


def _run_cli(proxy: MeteringProxy, home: Path) -> tuple[int, dict[str, Any]]:
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
           **proxy.environment()}
    done = subprocess.run([str(CLI), "-p", PROMPT, "--output-format", "json", "--model", MODEL], env=env, cwd=home,
                          capture_output=True, text=True, timeout=180)
    return done.returncode, json.loads(done.stdout)


@pytest.mark.parametrize("fault", [529, Fault.stream_drop(), Fault.stream_error()],
                         ids=["overloaded", "stream-cut", "error-event-mid-stream"])
def test_provider_faults_reach_claude_code_which_retries_them_itself(fake_api: FakeAPI, tmp_path: Path,
                                                                     fault: Any) -> None:
    fake_api.faults = FailCalls([0], fault)
    books = Books(tmp_path / "project")
    with MeteringProxy(upstream=_bedrock(fake_api), client=books.client, models={MODEL}, feature_id="feat-a", attempt=1,
                       on_event=books.on_event) as proxy:
        code, result = _run_cli(proxy, tmp_path)
    assert code == 0 and result["subtype"] == "success", result
    assert all(r.provider == "bedrock" for r in fake_api.requests) and len(fake_api.requests) >= 2
    state = books.replayed()
    answered = [r for r in fake_api.requests if r.status == 200 and r.outcome == "ok"]
    assert state.totals.api_calls == len(answered) == len(books.kinds("api_call"))
    billed = _billed(fake_api, MODEL)[1]
    warnings = " ".join(w["message"] for w in books.kinds("warning"))
    if isinstance(fault, Fault):  # nobody knows what the broken call billed: its worst case
        assert state.totals.unconfirmed_cost_usd > 0 and state.totals.cost_usd > billed
        assert "cut off" in warnings or "without its message_stop" in warnings
    else:  # the provider's 529 answered and booked at nothing: the books are the bill
        assert fake_api.requests[0].status == 529
        assert state.totals.cost_usd == pytest.approx(billed, abs=1e-9) and state.totals.unconfirmed_cost_usd == 0
        assert "bedrock refused the call" in warnings
