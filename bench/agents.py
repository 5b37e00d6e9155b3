"""Both agents on the same spec with the same fake: what Claude Code costs next to the built-in loop.

    python3 -m bench.agents                 # specs/textkit, each agent once
    python3 -m bench.agents --repeats 3     # the median wall time of three runs each

Each run is `orchestrate run specs/textkit/spec.json --agent A` in a new git project, as a user
starts it, against the fake Messages API playing the demo's textkit script (the same steps
for both agents: the fake says them in the built-in tools or in Claude Code's). The figures
come from what the fake received and billed, so both agents are measured by one meter:
agent requests per feature, prompt tokens per agent request (uncached input + cache reads +
cache writes), the cache-read share of those tokens, dollars per passed feature (the
run's agent and summarizer calls at the model's list price), and wall time. Prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # `python3 bench/agents.py` from a fresh clone
    sys.path.insert(0, str(REPO_ROOT))

from fake_messages_api import FakeAPI  # noqa: E402
from fake_messages_api.billing.ledger import RecordedRequest  # noqa: E402
from orchestrator.demo.scripted import demo_summarizer  # noqa: E402
from orchestrator.demo.textkit_plan import textkit_plan  # noqa: E402
from orchestrator.llm.costs.pricing import PriceTable, TokenUsage  # noqa: E402

SPEC = REPO_ROOT / "specs" / "textkit" / "spec.json"
AGENTS = ("builtin", "claude-code")
API_KEY = "sk-ant-bench-agents"


@dataclass
class AgentFigures:
    agent: str
    passed: int
    features: int
    agent_requests: int
    refused_requests: int  # answered 4xx (Claude Code's first call of a session: see docs/benchmarks.md)
    prompt_tokens: int
    cache_read_tokens: int
    cost_usd: float
    wall_s: float

    def row(self) -> str:
        per_request = self.prompt_tokens / max(self.agent_requests, 1)
        share = self.cache_read_tokens / max(self.prompt_tokens, 1)
        per_feature = self.cost_usd / max(self.passed, 1)
        return (f"| {self.agent} | {self.passed}/{self.features} | {self.agent_requests / self.features:.1f} "
                f"(+{self.refused_requests / self.features:.1f} refused) | {per_request:,.0f} | {share:.0%} "
                f"| ${per_feature:.4f} | {self.wall_s:.0f} s |")


def _usage(request: RecordedRequest) -> TokenUsage:
    usage = (request.response or {}).get("usage") or {}
    return TokenUsage(input=usage.get("input_tokens", 0), output=usage.get("output_tokens", 0),
                      cache_read=usage.get("cache_read_input_tokens") or 0,
                      cache_write=usage.get("cache_creation_input_tokens") or 0)


def run_agent(agent: str, workdir: Path) -> AgentFigures:
    """One `orchestrate run` of textkit with `agent`, measured by the fake."""
    project, home = workdir / agent / "textkit", workdir / agent / "home"
    project.mkdir(parents=True)
    home.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "ORCHESTRATE_"))}
    env.update(HOME=str(home), GIT_CONFIG_GLOBAL=str(home / ".gitconfig"), GIT_CONFIG_NOSYSTEM="1",
               ANTHROPIC_API_KEY=API_KEY, PYTHONPATH=str(REPO_ROOT))
    with FakeAPI(default_plan=textkit_plan, summarizer=demo_summarizer) as fake:
        env["ANTHROPIC_BASE_URL"] = fake.base_url
        started = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "orchestrator", "run", str(SPEC), "--agent", agent, "--json"],
                              cwd=project, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        wall = time.perf_counter() - started
        requests = fake.requests
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"{agent}: orchestrate run exited {proc.returncode}: {proc.stderr[-2000:]}")
    answered = [r for r in requests if r.status == 200 and r.kind in ("agent", "summarizer")]
    agent_calls = [r for r in answered if r.kind == "agent"]
    prices = PriceTable()
    usages = [_usage(r) for r in agent_calls]
    return AgentFigures(
        agent=agent,
        passed=proc.stdout.count('"type": "checkpoint"'),
        features=len(set(textkit_features())),
        agent_requests=len(agent_calls),
        refused_requests=sum(1 for r in requests if r.kind == "agent" and r.status is not None and r.status >= 400),
        prompt_tokens=sum(u.total_input for u in usages),
        cache_read_tokens=sum(u.cache_read for u in usages),
        cost_usd=sum(prices.cost(r.body["model"], _usage(r)) for r in answered),
        wall_s=wall,
    )


def textkit_features() -> list[str]:
    return [f["id"] for f in json.loads(SPEC.read_text())["features"]]


def main() -> int:
    parser = argparse.ArgumentParser(prog="python3 -m bench.agents", description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1, help="runs per agent; the median wall time is shown")
    parser.add_argument("--agents", nargs="+", default=list(AGENTS), choices=AGENTS)
    args = parser.parse_args()
    print("| agent | passed | agent requests per feature | prompt tokens per request | cache-read share "
          "| $ per passed feature | wall time |")
    print("|---|---|---|---|---|---|---|")
    for agent in args.agents:
        runs = []
        for _ in range(args.repeats):
            with tempfile.TemporaryDirectory(prefix="bench-agents-") as workdir:
                runs.append(run_agent(agent, Path(workdir)))
                print(f"{agent}: run {len(runs)} took {runs[-1].wall_s:.1f} s", file=sys.stderr)
        median = sorted(runs, key=lambda r: r.wall_s)[len(runs) // 2]
        median.wall_s = statistics.median(r.wall_s for r in runs)
        print(median.row(), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
