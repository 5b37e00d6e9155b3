"""What the Context Agent costs: no summarizer call where its output is never used, a prompt
that does not repeat what the stores hold, and a bounded number of active constraints, each
one retired at the limit named, never dropped unnoticed.

Run with `-s` to see the counts.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import context_agent.memory.text_index as text_index_module
from context_agent.budget import MAX_ACTIVE_CONSTRAINTS
from context_agent.memory.store_updates import add_constraint, enforce_constraint_limit
from context_agent.memory.stores import ActiveConstraints
from context_agent.project_memory import ContextAgent
from orchestrator.run.attempt.context_view import feature_reader
from orchestrator.store.disk.atomic import write_json_atomic
from orchestrator.store.disk.paths import ProjectPaths
from tests.cli_helpers import read_json

WORDS = [f"{a}{b}" for a in "bcdfghjklmnpqrstvwxz" for b in ("ax", "el", "im", "op", "ud", "yr")]


# ---- item 18: no summarizer call under window or replay ----------------------------------------


# ---- item 18: the summarizer's prompt does not pay twice for the same text ---------------------

def _write_log(paths: ProjectPaths, feature_id: str, report: dict[str, Any], status: str = "passed") -> None:
    verification = {"command": "pytest -q", "success": status == "passed", "exitCode": 0 if status == "passed" else 1,
                    "output": "3 passed in 0.01s" if status == "passed" else "E   AssertionError: boom",
                    "skipped": False, "attempt": 1}
    write_json_atomic(paths.feature_log(feature_id), {
        "id": feature_id, "name": feature_id, "category": "backend", "status": status, "attempts": 1,
        "verification": verification, "report": report,
    })


def test_the_summarizer_prompt_leaves_out_stored_items_and_passing_checks(tmp_path: Path) -> None:
    prompts: list[str] = []

    def model_call(**request: Any) -> Any:
        prompts.append(request["messages"][0]["content"])
        raise ConnectionError("the test only reads the prompt")

    agent = ContextAgent(tmp_path, read_feature=feature_reader(ProjectPaths.for_project(tmp_path)), model_call=model_call, on_event=lambda kind, data: None)
    paths = ProjectPaths.for_project(tmp_path)
    passed = {"summary": "Built the model.", "decisions": ["Ids are UUID4 strings"],
              "constraints": ["Standard library only"], "notes": ""}
    failed = {"summary": "Tried the API.", "decisions": ["Routes live in api.py"], "constraints": [], "notes": ""}
    for feature_id, report, status in (("model", passed, "passed"), ("api", failed, "failed")):
        agent.record_report(feature_id, report)
        _write_log(paths, feature_id, report, status)

    agent.summarize(["model", "api"], "every-5")

    logs_block = prompts[0].split("## Features since the last summary (one JSON log a line)\n", 1)[1]
    model_line, api_line = (json.loads(line) for line in logs_block.splitlines())
    # Stored above, once: the decisions and constraints the reports added.
    assert "- [D1] (Feature model) Ids are UUID4 strings" in prompts[0]
    assert "- [C1] Standard library only" in prompts[0]
    assert model_line["report"] == {"summary": "Built the model."}
    assert api_line["report"] == {"summary": "Tried the API."}
    # A passing check adds nothing to "passed"; a failing one is shown.
    assert "verification" not in model_line
    assert api_line["verification"]["output"] == "E   AssertionError: boom"


# ---- item 19: a hard limit on active constraints -----------------------------------------------

class NeverConsolidates:
    """A summarizer that answers validly and never retires anything."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, **request: Any) -> Any:
        self.calls += 1
        body = {"summary": f"Summary {self.calls}.", "newDecisions": [], "retiredDecisionIds": [],
                "newConstraints": [], "retiredConstraintIds": [], "newFailures": [], "preventions": []}
        return SimpleNamespace(content=[SimpleNamespace(type="text", text=json.dumps(body))], stop_reason="end_turn")


@pytest.mark.parametrize("use_model", [True, False], ids=["summarizer-never-consolidates", "no-model"])
def test_active_constraints_stay_under_the_limit_and_every_retired_one_is_named(tmp_path: Path, use_model: bool) -> None:
    events: list[tuple[str, dict[str, Any]]] = []
    agent = ContextAgent(tmp_path, read_feature=feature_reader(ProjectPaths.for_project(tmp_path)), model_call=NeverConsolidates(), on_event=lambda kind, data: events.append((kind, data)))
    paths = ProjectPaths.for_project(tmp_path)
    recorded = [f"Rule {n}: {WORDS[n % len(WORDS)]} must go through {WORDS[(7 * n) % len(WORDS)]}" for n in range(260)]
    largest = 0

    for batch in range(0, len(recorded), 5):
        ids = [f"f{n}" for n in range(batch, batch + 5)]
        for n, feature_id in zip(range(batch, batch + 5), ids, strict=False):
            report = {"summary": f"Did {feature_id}.", "constraints": [recorded[n]]}
            agent.record_report(feature_id, report)
            _write_log(paths, feature_id, report)
        agent.summarize(ids, "every-5", use_model=use_model)
        stored = read_json(paths.context.active_constraints)
        largest = max(largest, len(stored["constraints"]))

    active = {c["description"] for c in read_json(paths.context.active_constraints)["constraints"]}
    evicted = [item for kind, data in events if kind == "context.constraints_evicted" for item in data["evicted"]]
    named = {item["description"] for item in evicted}
    print(f"\n{len(recorded)} constraints recorded: {len(active)} active (at most {largest} at any time), "
          f"{len(evicted)} retired at the limit, each named in an event")
    assert largest == len(active) == MAX_ACTIVE_CONSTRAINTS
    # Nothing dropped unnoticed: every recorded constraint is active or named as retired.
    assert active | named == set(recorded) and not active & named
    # The agents' own are retired least recently stated first: the newest are the ones kept.
    assert active == set(recorded[-MAX_ACTIVE_CONSTRAINTS:])
    message = next(data["message"] for kind, data in events if kind == "context.constraints_evicted")
    assert recorded[0] in message and "spec's description" in message


def test_at_the_limit_the_summarizer_s_restatements_go_before_the_agents_own(tmp_path: Path) -> None:
    store = ActiveConstraints()
    for n in range(MAX_ACTIVE_CONSTRAINTS):
        add_constraint(store, f"Planted {WORDS[n]} rule", f"f{n}", category="", source="report", now=n)
    for n in range(5):
        add_constraint(store, f"Consolidated {WORDS[n + 100]} and {WORDS[n + 105]}", "", category="",
                       source="summarizer", now=1000 + n)

    evicted = enforce_constraint_limit(store, now=2000)

    assert [item.source for item in evicted] == ["summarizer"] * 5
    assert len(store.constraints) == MAX_ACTIVE_CONSTRAINTS
    assert all(item.source == "report" for item in store.constraints)
    assert {item.retired_by for item in store.retired} == {"limit"}


def test_a_new_constraint_is_compared_only_with_those_that_share_a_word(monkeypatch: pytest.MonkeyPatch) -> None:
    compared: list[int] = []
    real = text_index_module.restates

    def counting(shared: int, size: int, other_size: int) -> bool:
        compared.append(shared)
        return real(shared, size, other_size)

    monkeypatch.setattr(text_index_module, "restates", counting)
    store = ActiveConstraints()
    # Constraints of three words each, none shared with another.
    for n in range(0, 99, 3):
        add_constraint(store, f"{WORDS[n]} {WORDS[n + 1]} {WORDS[n + 2]}", "f", category="", source="report", now=n)

    added = add_constraint(store, f"Note: {WORDS[9]} {WORDS[10]} {WORDS[11]}", "", category="", source="summarizer", now=99)
    fresh = add_constraint(store, f"{WORDS[110]} {WORDS[111]} {WORDS[112]}", "", category="", source="summarizer", now=100)

    print(f"\n{len(store.constraints)} stored; comparisons for a restatement and a new constraint: {len(compared)}")
    assert added is None  # a restatement of the fourth
    assert fresh is not None
    assert len(compared) == 1  # the fourth alone shares a word; the new one shares none
