"""The combine step's parts: Context Agent stores merged, spend added once, checkpoint subjects, and
the merge queue landing a shard's checkpoint by cherry-pick."""

from __future__ import annotations

from pathlib import Path

from context_agent.agent_events import EventReporter
from context_agent.memory.store_union import merge_store_files
from context_agent.memory.store_updates import add_constraint, add_decision, add_failure
from context_agent.memory.stores import load_stores, save_stores
from orchestrator.combine.integration import checkpoint_feature
from orchestrator.combine.state_union import CombinedImports, grown_totals
from orchestrator.git.branch_worktree import shard_branch
from orchestrator.llm.costs.pricing import TokenUsage
from orchestrator.llm.costs.spend import RunTotals
from shared_base.files import ContextFiles


def _stores(root: Path, feature: str, shared: str) -> ContextFiles:
    files = ContextFiles.in_state_dir(root)
    stores = load_stores(files, EventReporter(None))
    add_decision(stores.decisions, f"{feature}: ids are UUIDs", feature, category="x", source="report", now=1)
    add_decision(stores.decisions, shared, feature, category="x", source="report", now=2)
    add_constraint(stores.constraints, "Python 3.11 standard library only", feature, category="x", source="report", now=3)
    add_failure(stores.failures, feature, attempt=1, command="pytest", exit_code=1, description=f"{feature} broke",
                prevention="run it", prevention_source="agent", now=4)
    stores.summary.summary = f"{feature} was built."
    save_stores(files, stores)
    return files


def test_stores_merge_keeps_feature_ids_and_adds_nothing_twice(tmp_path: Path) -> None:
    mine = _stores(tmp_path / "a", "feat-01", "Use JSON everywhere")
    theirs = _stores(tmp_path / "b", "feat-02", "Use JSON everywhere")

    first = merge_store_files(mine, theirs)
    second = merge_store_files(mine, theirs)

    merged = load_stores(mine, EventReporter(None))
    decisions = {(d.text, d.feature_id) for d in merged.decisions.decisions}
    assert ("feat-02: ids are UUIDs", "feat-02") in decisions and ("feat-01: ids are UUIDs", "feat-01") in decisions
    assert [d.text for d in merged.decisions.decisions].count("Use JSON everywhere") == 1
    assert len(merged.constraints.constraints) == 1
    assert {f.feature_id for f in merged.failures.failures} == {"feat-01", "feat-02"}
    assert "feat-01 was built." in merged.summary.summary and "feat-02 was built." in merged.summary.summary
    assert (first.decisions, first.failures, first.constraints) == (1, 1, 0)
    assert (second.decisions, second.failures, second.constraints) == (0, 0, 0)


def test_spend_is_added_once_per_shard_run_and_a_resumed_shard_adds_its_difference() -> None:
    def totals(cost: float, tokens: int) -> RunTotals:
        return RunTotals(cost_usd=cost, api_calls=tokens // 10, tokens=TokenUsage(input=tokens))

    combined = totals(1.0, 100)
    combined = grown_totals(combined, totals(0.5, 50), RunTotals())  # first import
    assert combined.cost_usd == 1.5 and combined.tokens.input == 150
    combined = grown_totals(combined, totals(0.5, 50), totals(0.5, 50))  # the same again
    assert combined.cost_usd == 1.5 and combined.tokens.input == 150
    combined = grown_totals(combined, totals(0.75, 80), totals(0.5, 50))  # the shard resumed and spent more
    assert combined.cost_usd == 1.75 and combined.tokens.input == 180
    combined = grown_totals(combined, RunTotals(), totals(0.75, 80))  # a forged copy with zero totals
    assert combined.cost_usd == 1.75 and combined.tokens.input == 180
    assert CombinedImports().imports == {}


def test_checkpoint_subjects_and_shard_branches() -> None:
    assert checkpoint_feature("orchestrate: feat-01: Feature 1") == "feat-01"
    assert checkpoint_feature("orchestrate: a.b_c-1: x: y") == "a.b_c-1"
    assert checkpoint_feature("initial") is None
    assert checkpoint_feature("orchestrate: ../x: y") is None
    assert shard_branch("2/4") == "orchestrate/shard-2-of-4"


