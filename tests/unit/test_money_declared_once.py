"""The run's money is declared once: `RunTotals` (the snapshot of the `RunSpend` counter).

Money used to be kept by `Spend` and `RunTotals` both, copied into each other both ways, and
redeclared by the report's totals: a new figure meant editing three classes and two copies.
A class that declares several of the run's money fields (those a feature's state does not
have) is a second model of that fact; hold or extend `RunTotals` instead (`ReportTotals` does).
"""

from __future__ import annotations

import ast
from pathlib import Path

from orchestrator.llm.costs.spend import RunTotals
from orchestrator.store.run_state import FeatureState

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("orchestrator", "context_agent", "shared_base", "fake_messages_api")

# The run's money fields, a feature's own (`tokens`, `cost_usd`) left out; `run_*` were `Spend`'s names for them.
RUN_MONEY = (set(RunTotals.model_fields) - set(FeatureState.model_fields)) | {"run_cost_usd", "run_tokens"}
# An event may carry two of them (the run's figures when it was emitted); three make a model of the run's money.
MOST_ELSEWHERE = 2


def money_declarations() -> dict[str, set[str]]:
    """Each class (`path:Name`) that declares fields (annotated names in its body) of `RUN_MONEY`, with them."""
    found: dict[str, set[str]] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                if not isinstance(node, ast.ClassDef):
                    continue
                names = {statement.target.id for statement in node.body
                         if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)}
                if names & RUN_MONEY:
                    found[f"{path.relative_to(ROOT)}:{node.name}"] = names & RUN_MONEY
    return found


def test_only_run_totals_declares_the_runs_money() -> None:
    found = money_declarations()
    assert found.pop("orchestrator/llm/costs/spend.py:RunTotals") == RUN_MONEY - {"run_cost_usd", "run_tokens"}
    second = {name: sorted(fields) for name, fields in found.items() if len(fields) > MOST_ELSEWHERE}
    assert second == {}, f"the run's money declared again (hold or extend RunTotals): {second}"


def test_the_money_fields_are_the_runs_own() -> None:
    assert {"api_calls", "summarizer_cost_usd", "unconfirmed_cost_usd", "by_model"} <= RUN_MONEY
    assert "cost_usd" not in RUN_MONEY and "tokens" not in RUN_MONEY  # a feature's, an attempt's, a call's too
