"""Restatements: the summarizer names the stored item an item states again (`restates`), and a
safety net recognises careless restatements in other words without merging rules that differ.
A false merge loses a rule, which is worse than a duplicate, so both directions are tested."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from context_agent.memory.store_updates import add_constraint
from context_agent.memory.stores import ActiveConstraints
from context_agent.project_memory import ContextAgent
from context_agent.words import claim_words, find_near_duplicate
from orchestrator.store.disk.paths import ProjectPaths
from tests.unit.context.test_context_summarizer import (
    Recorder,
    _write_log,
    answer,
)


def _agent(root: Path, call: Any, events: list[tuple[str, dict[str, Any]]]) -> ContextAgent:
    return ContextAgent(root, model_call=call, summarizer_model="claude-test-small",
                        on_event=lambda kind, data: events.append((kind, data)))


def _stored(root: Path, name: str, key: str) -> list[dict[str, Any]]:
    path = getattr(ProjectPaths.for_project(root).context, name)
    items: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))[key]
    return items


def _seeded(tmp_path: Path, call: Any, events: list[tuple[str, dict[str, Any]]]) -> ContextAgent:
    """An agent whose stores hold D1, D2 and C1, C2 from two older features' reports."""
    agent = _agent(tmp_path, call, events)
    agent.record_report("a", {"decisions": ["Ids are UUID4 strings"], "constraints": ["Money is never a float"]})
    agent.record_report("b", {"decisions": ["Timestamps are UTC milliseconds"],
                              "constraints": ["Every endpoint answers JSON"]})
    _write_log(tmp_path, "c")
    return agent


def test_an_item_that_restates_a_stored_id_renews_it_and_keeps_its_wording(tmp_path: Path) -> None:
    events: list[tuple[str, dict[str, Any]]] = []
    call = Recorder(answer(
        newDecisions=[{"text": "Identifiers: random UUIDs", "featureId": "a", "restates": "D1"}],
        newConstraints=[{"description": "Never use floats for amounts", "featureId": "", "restates": "C1"}],
    ))
    agent = _seeded(tmp_path, call, events)

    result = agent.summarize(["c"], "every-5")

    decisions = _stored(tmp_path, "key_decisions", "decisions")
    constraints = _stored(tmp_path, "active_constraints", "constraints")
    assert [d["text"] for d in decisions] == ["Ids are UUID4 strings", "Timestamps are UTC milliseconds"]
    assert [c["description"] for c in constraints] == ["Money is never a float", "Every endpoint answers JSON"]
    # Renewed: recorded again now, so the newest by recency (eviction and order go by seq).
    assert max(decisions, key=lambda d: d["seq"])["id"] == "D1"
    assert max(constraints, key=lambda c: c["seq"])["id"] == "C1"
    assert (result.renewed_decisions, result.renewed_constraints) == (1, 1)
    assert (result.new_decisions, result.new_constraints) == (0, 0)
    assert not [kind for kind, _ in events if kind == "summarizer.unknown_restates"]


def test_replaces_puts_the_summarizer_s_wording_in_place_of_the_stored_one(tmp_path: Path) -> None:
    events: list[tuple[str, dict[str, Any]]] = []
    call = Recorder(answer(
        newConstraints=[{"description": "Amounts are integer cents, never floats", "featureId": "",
                         "restates": "C1", "replaces": True}],
    ))
    agent = _seeded(tmp_path, call, events)

    agent.summarize(["c"], "every-5")

    constraints = _stored(tmp_path, "active_constraints", "constraints")
    assert [(c["id"], c["description"]) for c in constraints] == [
        ("C1", "Amounts are integer cents, never floats"), ("C2", "Every endpoint answers JSON")]
    # The index follows the new wording: restating the old one later is a new rule, the new one is not.
    store = ActiveConstraints.model_validate({"constraints": constraints, "nextSeq": 10})
    assert add_constraint(store, "Amounts are integer cents, never floats.", "", category="", source="summarizer", now=1) is None


def test_an_unknown_restates_id_is_a_new_item_with_a_warning(tmp_path: Path) -> None:
    events: list[tuple[str, dict[str, Any]]] = []
    call = Recorder(answer(
        newConstraints=[{"description": "Uploads over 5 MB are refused", "featureId": "", "restates": "C99"}],
    ))
    agent = _seeded(tmp_path, call, events)

    result = agent.summarize(["c"], "every-5")

    constraints = _stored(tmp_path, "active_constraints", "constraints")
    assert "Uploads over 5 MB are refused" in [c["description"] for c in constraints]
    assert result.new_constraints == 1 and result.renewed_constraints == 0
    warnings = [data for kind, data in events if kind == "summarizer.unknown_restates"]
    assert len(warnings) == 1 and warnings[0]["ids"] == ["C99"] and "C99" in warnings[0]["message"]


# --- the safety net: restatements recognised ------------------------------------------------

RESTATEMENTS = [
    ("Payment webhooks must always go through the ledger queue",
     "Note: payment webhooks should consistently go by way of the ledger queue."),
    ("Payment webhooks must always go through the ledger queue",
     "Remember that Note: Going forward, payment webhooks go via the ledger queue"),
    ("Secrets are never written to logs", "Make sure secrets are not ever written to logs."),
    ("No network access in tests", "Tests: never access the network"),
    ("Use SQLite for the session store", "Adopt SQLite for the session store."),
    ("Every handler keeps request ids", "Each handler retains request ids"),
    ("Exports never hold more than 10000 rows in memory",
     "As agreed earlier, rows in memory - Exports never hold more than 10000."),
]


@pytest.mark.parametrize(("stored", "restated"), RESTATEMENTS)
def test_a_restatement_in_other_words_is_recognised(stored: str, restated: str) -> None:
    assert find_near_duplicate(restated, ["Something unrelated entirely", stored]) == 1


# --- the safety net: different rules kept apart ---------------------------------------------

DISTINCT = [
    ("Payment webhooks must always go through the ledger queue",
     "Refund webhooks must always go through the ledger queue"),
    ("Payment webhooks must always go through the ledger queue",
     "Payment webhooks must never go through the ledger queue"),
    ("Only the Python standard library may be used", "The Python standard library may be used"),
    ("Secrets are never written to logs", "Secrets are written to logs"),
    ("Uploads larger than 5 MB are rejected", "Uploads larger than 50 MB are rejected"),
    ("Payment webhooks must always go through the ledger queue",
     "Payment webhooks must always go through the ledger queue first"),
    ("Search answers within 200 ms", "Search answers within 200 ms unless the index is cold"),
]


@pytest.mark.parametrize(("stored", "other"), DISTINCT)
def test_a_similar_but_different_rule_is_not_merged(stored: str, other: str) -> None:
    assert find_near_duplicate(other, [stored]) is None
    assert find_near_duplicate(stored, [other]) is None


def test_the_index_and_the_linear_test_agree() -> None:
    store = ActiveConstraints()
    for stored, _ in [*RESTATEMENTS, *DISTINCT]:
        add_constraint(store, stored, "f", category="", source="report", now=0)
    for _stored, restated in RESTATEMENTS:
        assert add_constraint(store, restated, "", category="", source="summarizer", now=1) is None, restated
    for _, other in DISTINCT:
        if claim_words(other) not in {claim_words(c.description) for c in store.constraints}:
            assert add_constraint(store, other, "", category="", source="summarizer", now=2) is not None, other


def test_an_agent_report_restating_a_constraint_does_not_store_it_twice(tmp_path: Path) -> None:
    events: list[tuple[str, dict[str, Any]]] = []
    agent = _agent(tmp_path, None, events)
    agent.record_report("a", {"constraints": ["Payment webhooks must always go through the ledger queue"]})
    agent.record_report("b", {"constraints": ["Note: payment webhooks should go via the ledger queue",
                                              "Refund webhooks must always go through the ledger queue"]})
    agent.summarize([], "test", use_model=False)

    constraints = _stored(tmp_path, "active_constraints", "constraints")
    assert [c["description"] for c in constraints] == [
        "Payment webhooks must always go through the ledger queue",
        "Refund webhooks must always go through the ledger queue",
    ]
    # Restated by another feature: renewed (recorded again), not added.
    assert max(constraints, key=lambda c: c["seq"])["description"].startswith("Refund")
    assert constraints[0]["seq"] > 1
