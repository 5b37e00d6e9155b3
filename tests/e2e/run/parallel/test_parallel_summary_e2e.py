"""`--jobs N` and the every-5 summary: the run goes on while the summarizer's call runs.

The fake's summarizer holds its first reply until two features' first model requests have
arrived after the call began. That can only happen if the run starts features (more than the
one it may start just before summarizing) and builds their prompts, which read the Context
Agent, while the summarizer call is in flight: the summary runs off the run's loop, and its
call does not hold the Context Agent's lock.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from fake_messages_api.scripted_agent.plans import default_plan
from tests.cli_helpers import plain_summarizer, run_cli, write_spec


def test_a_feature_starts_while_the_summarizer_call_runs(tmp_path: Path, fake_api: Any) -> None:
    first_steps = threading.Condition()
    started: list[str] = []  # features whose first request arrived, in order
    during_summary: list[str] = []

    def plan(turn: Any) -> list[dict[str, Any]]:
        if turn.step == 0:
            with first_steps:
                started.append(turn.feature_id)
                first_steps.notify_all()
        return default_plan(turn)

    def summarizer(request: dict[str, Any]) -> dict[str, Any]:
        with first_steps:
            if not during_summary:
                before = len(started)
                first_steps.wait_for(lambda: len(started) >= before + 2, timeout=10)
                during_summary.extend(started[before:] or ["none"])  # "none": marks the first call as seen
        return plain_summarizer(request)

    fake_api.default_plan, fake_api.summarizer = plan, summarizer
    # 20 features: a feature gives its slot up when it goes to the merge queue, so with the fake's
    # instant replies about half of them have started by the 5th completion.
    spec = write_spec(tmp_path, 20)
    root = tmp_path / "project"
    result = run_cli(["run", str(spec), "-j", "2", "--json", "--project-dir", str(root)], cwd=tmp_path, fake=fake_api)

    assert result.code == 0, result.stderr[-3000:]
    assert len(during_summary) >= 2, f"features started while the summarizer's call ran: {during_summary}"
    summaries = [e for e in result.events() if e["type"] == "summarization"]
    triggers = [e["trigger"] for e in summaries]
    assert triggers[0] == "every-5" and triggers[-1] == "end" and set(triggers[1:-1]) <= {"every-5"}, triggers
    summarized = [fid for e in summaries for fid in e["features"]]
    assert sorted(summarized) == [f"feat-{i:02d}" for i in range(1, 21)]  # each once, none lost
    state = json.loads((root / ".autonomous" / "state" / "execution-state.json").read_text())
    assert state["summarization"]["unsummarized"] == []
