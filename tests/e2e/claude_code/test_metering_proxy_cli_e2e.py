"""The real Claude Code CLI (bundled in claude-agent-sdk) talking to the packaged fake through
the metering proxy: its calls are booked at the fake's bill, the cap stops it at once, and
neither it nor its commands ever hold the run's key."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from fake_messages_api.faults import FailCalls, Fault
from fake_messages_api.scripted_agent.agent_turn import AgentTurn
from fake_messages_api.scripted_agent.plans import text, tool_use
from fake_messages_api.server import FakeAPI
from orchestrator.claude_code.billing import PlanAttempt
from orchestrator.claude_code.metering.metering_proxy import MeteringProxy
from orchestrator.claude_code.metering.upstream import Upstream
from orchestrator.llm.errors import LimitReached
from tests.e2e.claude_code.test_metering_proxy_e2e import REAL_KEY, Books, _billed

claude_agent_sdk = pytest.importorskip("claude_agent_sdk", reason="the claude-code extra is not installed")
CLI = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
pytestmark = pytest.mark.skipif(not CLI.exists(), reason="this claude-agent-sdk wheel bundles no Claude Code CLI")
MODEL = "claude-sonnet-5-5"  # the run's: the proxy serves no other
PROMPT = "## Feature\nID: feat-a\nName: A feature\n\nDo the feature."


def _run_cli(proxy: MeteringProxy, home: Path, *args: str) -> tuple[int, dict[str, Any]]:
    """The CLI as the backend starts it: an environment of its own, the proxy's URL and dummy key."""
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
           **proxy.environment()}
    done = subprocess.run([str(CLI), "-p", PROMPT, "--output-format", "json", "--model", MODEL, *args], env=env, cwd=home,
                          capture_output=True, text=True, timeout=180)
    return done.returncode, json.loads(done.stdout)


@pytest.fixture
def upstream(fake_api: FakeAPI, monkeypatch: pytest.MonkeyPatch) -> Upstream:
    """The run's environment: the fake's URL and the real key, read as the run reads them."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_api.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", REAL_KEY)
    return Upstream.from_environment()


def _proxy(upstream: Upstream, books: Books) -> MeteringProxy:
    return MeteringProxy(upstream=upstream, client=books.client, models={MODEL}, feature_id="feat-a", attempt=1,
                         on_event=books.on_event)


def test_claude_codes_calls_are_booked_at_exactly_what_the_api_billed(fake_api, upstream, tmp_path):
    books = Books(tmp_path / "project")
    with _proxy(upstream, books) as proxy:
        code, result = _run_cli(proxy, tmp_path)
    assert code == 0 and result["subtype"] == "success", result
    answered = [r for r in fake_api.requests if r.status == 200]
    assert answered and all(r.headers.get("x-api-key") == REAL_KEY for r in fake_api.requests)
    state = books.replayed()
    [model] = {r.body["model"] for r in answered}
    billed, cost = _billed(fake_api, model)
    assert state.totals.tokens == billed and state.totals.cost_usd == pytest.approx(cost)
    assert state.totals.api_calls == len(answered) == len(books.kinds("api_call"))
    assert billed.cache_write > 0  # Claude Code marks its prompt for caching; the cache fields are booked
    assert {r.body["max_tokens"] for r in answered} == {8192}  # the run's max_output_tokens, as the built-in asks


def test_at_the_cap_claude_code_is_refused_before_any_call_and_stops_without_retrying(fake_api, upstream, tmp_path):
    books = Books(tmp_path / "project", max_cost=0.01)
    with _proxy(upstream, books) as proxy:
        code, result = _run_cli(proxy, tmp_path)
    assert code != 0 and result["is_error"]
    assert "cost cap" in result["result"] and result["api_error_status"] == 402
    assert fake_api.calls == 0
    assert proxy.calls == 1  # refused once, never retried
    assert proxy.refusal is not None


def test_the_agents_commands_see_only_the_dummy_key(fake_api, upstream, tmp_path):
    def show_environment(turn: AgentTurn) -> list[dict[str, Any]]:
        command = "env; tr '\\0' '\\n' < /proc/$PPID/environ"  # its own and its parent's, the CLI's
        return [tool_use("Bash", {"command": command, "description": "show env"})] if turn.step == 0 else [text("ok")]

    fake_api.default_plan = show_environment
    books = Books(tmp_path / "project")
    with _proxy(upstream, books) as proxy:
        code, _ = _run_cli(proxy, tmp_path, "--allowedTools", "Bash")
    assert code == 0
    results = [block for r in fake_api.requests for message in r.body["messages"] if isinstance(message["content"], list)
               for block in message["content"] if block.get("type") == "tool_result"]
    output = json.dumps(results)
    assert f"ANTHROPIC_API_KEY={proxy.token}" in output  # the command ran and printed its environment
    assert REAL_KEY not in output


def test_on_a_plan_claude_code_stops_at_the_attempts_budget_and_its_reported_cost_is_booked(fake_api, tmp_path):
    """No proxy on a Claude plan: the CLI talks to the API itself (here the fake, with a key
    standing in for the user's sign-in) with `--max-budget-usd` (the SDK's `max_budget_usd`)."""
    fake_api.default_plan = lambda turn: [tool_use("Bash", {"command": "true", "description": "again"})]  # never done
    books = Books(tmp_path / "project", max_cost=0.3)
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
           "ANTHROPIC_BASE_URL": fake_api.base_url, "ANTHROPIC_API_KEY": "sign-in-stand-in"}
    with PlanAttempt(books.client, model="claude-opus-5-5", feature_id="feat-a", attempt=1,
                     on_event=books.on_event) as plan:
        assert plan.budget == pytest.approx(0.3)
        done = subprocess.run([str(CLI), "-p", PROMPT, "--output-format", "json", "--allowedTools", "Bash",
                               "--max-budget-usd", str(plan.budget)], env=env, cwd=tmp_path, capture_output=True,
                              text=True, timeout=180)
        result = json.loads(done.stdout)
        plan.record(SimpleNamespace(**{k: result.get(k) for k in ("subtype", "num_turns", "total_cost_usd", "usage")}))
    assert result["subtype"] == "error_max_budget_usd"
    with pytest.raises(LimitReached):
        plan.raise_if_capped()
    reported = result["total_cost_usd"]
    assert reported >= 0.3  # per attempt, not per call: the call that crossed the budget is spent
    state = books.replayed()
    assert state.totals.cost_usd == pytest.approx(reported) and state.totals.api_calls == 1


def test_claude_code_working_until_the_cap_never_passes_it_and_the_books_match_the_bill(fake_api, upstream, tmp_path):
    """A session that would go on for ever (a Bash call each turn) runs until the next call
    could pass `--max-cost`; the books then hold what the fake billed, to the cent, under the cap."""
    fake_api.default_plan = lambda turn: [tool_use("Bash", {"command": "true", "description": "again"})]
    books = Books(tmp_path / "project", max_cost=0.5)
    with _proxy(upstream, books) as proxy:
        code, result = _run_cli(proxy, tmp_path, "--allowedTools", "Bash")
    assert code != 0 and "cost cap" in result["result"]
    answered = [r for r in fake_api.requests if r.status == 200]
    assert len(answered) >= 3  # it worked for several turns before the cap
    [model] = {r.body["model"] for r in answered}
    billed = _billed(fake_api, model)[1]
    state = books.replayed()
    assert state.totals.cost_usd == pytest.approx(billed) and state.totals.cost_usd <= 0.5
    print(f"\n{len(answered)} calls answered, booked ${state.totals.cost_usd:.4f} of a $0.50 cap, billed ${billed:.4f}")
    assert state.totals.unconfirmed_cost_usd == 0


@pytest.mark.parametrize("fault", [529, 429, Fault.stream_drop(after_events=4)], ids=["529", "429", "cut"])
def test_api_faults_reach_claude_code_which_retries_them_itself(fake_api, upstream, tmp_path, fault):
    """An error answer passes through (nothing booked) and a cut answer breaks the CLI's stream
    (booked at its worst case); Claude Code's own retry then gets the answer."""
    fake_api.faults = FailCalls([1], fault)  # the first call the fake accepts (the CLI's first is a 400 it retries)
    books = Books(tmp_path / "project")
    with _proxy(upstream, books) as proxy:
        code, result = _run_cli(proxy, tmp_path)
    assert code == 0 and result["subtype"] == "success", result
    answered = [r for r in fake_api.requests if r.status == 200 and r.outcome == "ok"]
    state = books.replayed()
    [model] = {r.body["model"] for r in answered}
    assert state.totals.api_calls == len(answered)
    assert state.totals.cost_usd >= _billed(fake_api, model)[1] - 1e-9
    cut = isinstance(fault, Fault)
    assert (state.totals.unconfirmed_cost_usd > 0) == cut
    assert books.kinds("warning")
