"""Cost per passed feature with and without `--escalate-model`, priced with the price table.

The spec: N features, one in three "hard". The fake's scripted agent solves an easy feature
on any model, and a hard one only when the request is for the strong model (the small model
always writes the wrong answer there, so its checks fail). Three runs of the same spec, each
from an empty project, up to 3 attempts a feature:

- small only:  every attempt on the small model (Haiku): the hard features fail;
- escalation:  small model first, the strong model (Opus) for the attempt after a failure;
- strong only: every attempt on the strong model.

Costs are the orchestrator's own books (the state's totals: the fake's billed usage, cache
reads and writes included, priced by `orchestrator.llm.costs.pricing`), summarizer included.

    python3 -m bench.escalation [--features N]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anthropic

from bench.harness import API_KEY, QuietRenderer, new_project, scratch_dir
from bench.harness import FeatureMark
from orchestrator.config import RunConfig
from orchestrator.run.runner import RunOptions
from orchestrator.run.factory import build_runner
from orchestrator.spec.load import load_spec
from orchestrator.store.events import EventSink
from orchestrator.store.disk.paths import ProjectPaths
from tests.cli_helpers import plain_summarizer
from fake_messages_api.scripted_agent.agent_turn import AgentTurn
from fake_messages_api.server import FakeAPI
from fake_messages_api.scripted_agent.plans import bash, edit_create, report, text

SMALL, STRONG = "claude-haiku-4-5", "claude-opus-4-5"
LISTING = "\n".join(f"src/part_{i:03d}.py  {1200 + 37 * i} bytes" for i in range(60))


def _is_hard(feature_id: str) -> bool:
    return int(feature_id.rsplit("-", 1)[1]) % 3 == 0


def plan(turn: AgentTurn) -> list[dict[str, Any]]:
    """Look around, write the answer (wrong on a hard feature unless on the strong model), report."""
    fid = turn.feature_id
    answer = "bad" if _is_hard(fid) and turn.request.get("model") != STRONG else "good"
    steps = [[bash("ls -l src")], [edit_create(f"answers/{fid}.txt", answer + "\n")],
             [report(f"Implemented {fid}", decisions=[f"{fid} writes its answer file"])], [text("done")]]
    return steps[min(turn.step, len(steps) - 1)]


def spec(count: int) -> dict[str, Any]:
    features = [
        {"id": f"feat-{i:02d}", "name": f"Part {i}", "category": "backend",
         "description": f"Part {i} of the service: write its answer file. " + LISTING[: 400],
         "acceptance": ["the answer is good"], "verify": f'test "$(cat answers/feat-{i:02d}.txt)" = good'}
        for i in range(1, count + 1)
    ]
    return {"project": "answers", "description": "A service whose parts write answer files. " * 20, "features": features}


@dataclass
class Outcome:
    label: str
    passed: int
    failed: int
    cost_usd: float
    by_model: dict[str, float]
    attempts: int

    @property
    def per_passed(self) -> float:
        return self.cost_usd / self.passed if self.passed else float("inf")


def run_once(label: str, count: int, **settings: Any) -> Outcome:
    with tempfile.TemporaryDirectory(prefix="orchestrate-bench-", dir=scratch_dir()) as tmp:
        root, spec_path = new_project(Path(tmp), spec(count))
        with FakeAPI(default_plan=plan, summarizer=plain_summarizer, keep_requests=1) as fake:
            config = RunConfig(commit=False, max_attempts=3, summarizer_model=SMALL, **settings)
            sdk = anthropic.Anthropic(base_url=fake.base_url, api_key=API_KEY)
            paths = ProjectPaths.for_project(root)
            events = EventSink(QuietRenderer(lambda: FeatureMark(0.0, 0.0, 0.0)), paths.events_log)
            result = build_runner(load_spec(spec_path), config, RunOptions(), paths, events, sdk=sdk).run()
            events.close()
            sdk.close()
        state = result.state
        statuses = [entry.status for entry in state.features.values()]
        return Outcome(
            label, statuses.count("passed"), statuses.count("failed"), state.totals.cost_usd,
            {model: share.cost_usd for model, share in state.totals.by_model.items()},
            sum(entry.attempts for entry in state.features.values()),
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--features", type=int, default=12)
    args = parser.parse_args()
    outcomes = [
        run_once("small only", args.features, model=SMALL),
        run_once("escalation", args.features, model=SMALL, escalate_model=STRONG),
        run_once("strong only", args.features, model=STRONG),
    ]
    print(f"{args.features} features, {sum(_is_hard(f'feat-{i:02d}') for i in range(1, args.features + 1))} hard; "
          f"small = {SMALL}, strong = {STRONG}; up to 3 attempts a feature")
    print(f"{'run':<12} {'passed':>6} {'failed':>6} {'attempts':>8} {'cost USD':>9} {'USD/passed':>10}  by model")
    for o in outcomes:
        models = ", ".join(f"{m} {c:.4f}" for m, c in sorted(o.by_model.items()))
        print(f"{o.label:<12} {o.passed:>6} {o.failed:>6} {o.attempts:>8} {o.cost_usd:>9.4f} {o.per_passed:>10.4f}  {models}")
    print(json.dumps({o.label: {"passed": o.passed, "costUsd": round(o.cost_usd, 6),
                                "usdPerPassed": round(o.per_passed, 6)} for o in outcomes}))


if __name__ == "__main__":
    main()
