"""The Context Agent shared by `--jobs N` workers: the summarizer's model call holds no one up,
and nothing recorded while it runs is lost when the new summary is written."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from context_agent.project_memory import ContextAgent
from orchestrator.run.attempt.context_view import feature_reader
from orchestrator.store.disk.paths import ProjectPaths
from tests.unit.context.test_context_summarizer import (
    _write_log,
    answer,
    fake_message,
)


def _report(decision: str) -> dict[str, Any]:
    return {"summary": f"Did {decision}.", "decisions": [{"decision": decision, "rationale": "because"}],
            "constraints": [], "notes": ""}


def test_a_worker_records_and_injects_while_the_summarizer_call_runs_and_its_report_is_kept(tmp_path: Path) -> None:
    _write_log(tmp_path, "a")
    in_call, release = threading.Event(), threading.Event()

    def slow_model(**_: Any) -> Any:
        in_call.set()
        assert release.wait(60), "the worker never got through while the summarizer call ran"
        return fake_message(answer(summary="Feature a is built."))

    agent = ContextAgent(tmp_path, model_call=slow_model, read_feature=feature_reader(ProjectPaths.for_project(tmp_path)))
    agent.record_report("a", _report("Use SQLite for a"))
    results: list[Any] = []
    summarizing = threading.Thread(target=lambda: results.append(agent.summarize(["a"], "every-5")))
    summarizing.start()
    # Generous: the first summarizer call imports the SDK, which takes seconds on a loaded machine.
    assert in_call.wait(60)

    # Another worker, as a `ContextView` does it: under the agent's lock, which the call does not hold.
    got_lock = agent.lock.acquire(timeout=5)
    assert got_lock, "the summarizer's model call held the Context Agent's lock"
    try:
        agent.record_report("b", _report("Use UTC timestamps for b"))
        injection = agent.get_injection("c")
    finally:
        agent.lock.release()
    release.set()
    summarizing.join(60)

    assert results and results[0].success and results[0].source == "model"
    assert "Use UTC timestamps for b" in str(injection.model_dump())
    memory = agent.memory()
    decisions = [d.text for d in memory.decisions.decisions]
    assert "Use SQLite for a" in decisions and "Use UTC timestamps for b" in decisions  # b's report survived the fold
    assert memory.summary.summary == "Feature a is built."
    assert [note.feature_id for note in memory.summary.recent] == ["b"]  # b is not summarized yet, still a recent note
