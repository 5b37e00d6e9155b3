"""One feature state (issue 45, item 1): `FeatureState` (`store/run_state.py`, what
`execution-state.json` holds per feature) declares a feature's status, attempts, times, tokens and
cost, through `FeatureProgress`, the part the feature's log shares (`FeatureLog` derives from it);
every other view of a feature holds it or computes from it, and does not declare the same fields
again to copy them across (the report's `ReportedFeature`, the HTML report's `FeatureRow`, the
`feature_finished` event).

Found by reading the source: any class of the packages (pydantic model, dataclass, TypedDict,
NamedTuple) that declares `SHARED_AT_MOST + 1` or more of `FeatureState`'s fields is a second
declaration of the state."""

from __future__ import annotations

import ast
from pathlib import Path

from orchestrator.store.feature_log import LOG_KEY_ORDER, FeatureLog
from orchestrator.store.run_state import FeatureProgress, FeatureState

ROOT = Path(__file__).resolve().parents[3]
PACKAGES = ("orchestrator", "context_agent")
# A class may share a few names with the state (`status`, `reason`, `attempts` of a status change
# in working memory; `tokens` and `costUsd` of money): more than this is the state again.
SHARED_AT_MOST = 3
# The state's own declaration: the feature's progress (shared with its log) and the rest.
DECLARATIONS = ("FeatureProgress", "FeatureState")


def declared_fields(cls: ast.ClassDef) -> set[str]:
    """The names a class body declares with an annotation (`name: type` or `name: type = ...`)."""
    return {node.target.id for node in cls.body if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)}


def redeclarations(root: Path, state_fields: set[str]) -> dict[str, list[str]]:
    """Every class under the packages at `root` declaring more than `SHARED_AT_MOST` of `state_fields`."""
    found = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ClassDef) and node.name not in DECLARATIONS:
                    shared = declared_fields(node) & state_fields
                    if len(shared) > SHARED_AT_MOST:
                        found[f"{path.relative_to(root)}:{node.name}"] = sorted(shared)
    return found


def test_only_feature_state_declares_a_features_state() -> None:
    second = redeclarations(ROOT, set(FeatureState.model_fields))
    assert not second, (
        f"these classes declare a feature's state again: {second}; hold a FeatureState (or compute from one) instead"
    )


def test_the_feature_log_is_the_states_progress_and_its_own_details() -> None:
    """The log's format takes the state's progress fields from their one declaration."""
    assert issubclass(FeatureLog, FeatureProgress)
    assert set(FeatureProgress.model_fields) <= set(LOG_KEY_ORDER) == set(FeatureLog.model_fields)


def test_the_scan_finds_a_copy_of_the_state(tmp_path: Path) -> None:
    """A class copying four of the state's fields is caught, wherever in the packages it is."""
    module = tmp_path / "orchestrator" / "commands" / "row.py"
    module.parent.mkdir(parents=True)
    module.write_text("class Row:\n    status: str\n    attempts: int\n    cost_usd: float\n    duration_ms: int\n")
    (tmp_path / "context_agent").mkdir()
    assert redeclarations(tmp_path, set(FeatureState.model_fields)) == {
        "orchestrator/commands/row.py:Row": ["attempts", "cost_usd", "duration_ms", "status"],
    }
