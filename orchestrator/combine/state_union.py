"""The states and feature logs of several shards, unioned into the combining project's.

A feature's entry comes from the artifact whose work was combined (attempts, tokens, cost,
timestamps as the shard recorded them); a passed feature stays passed unless its work could not
be combined. Run totals add up each artifact's spend once: what was added per run id is kept in
`.autonomous/state/combined.json`, so combining the same artifacts again adds nothing, and a
shard re-run after a failure adds only what it spent since.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import Field, ValidationError

from orchestrator.combine.artifact import Artifact
from orchestrator.store.atomic import write_text_atomic
from orchestrator.store.paths import ProjectPaths
from orchestrator.store.run_state import CamelModel, FeatureState, FeatureStatus, RunState, RunTotals

IMPORTS_FILE = "combined.json"


class CombinedImports(CamelModel):
    """`.autonomous/state/combined.json`: the totals already added, per shard run id."""

    imports: dict[str, RunTotals] = Field(default_factory=dict)


def load_imports(paths: ProjectPaths) -> CombinedImports:
    try:
        return CombinedImports.model_validate_json((paths.state_dir / IMPORTS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValidationError, UnicodeDecodeError):
        return CombinedImports()


def save_imports(paths: ProjectPaths, imports: CombinedImports) -> None:
    write_text_atomic(paths.state_dir / IMPORTS_FILE, imports.model_dump_json(by_alias=True, indent=2) + "\n")


def add_spend(state: RunState, artifact: Artifact, imports: CombinedImports) -> None:
    """Add to `state`'s totals what `artifact`'s run spent and was not added before."""
    theirs = artifact.state.totals
    before = imports.imports.get(artifact.state.run_id, RunTotals())
    state.totals = _shifted(state.totals, theirs, before)
    imports.imports[artifact.state.run_id] = theirs.model_copy(deep=True)


def _shifted(totals: RunTotals, plus: RunTotals, minus: RunTotals) -> RunTotals:
    """`totals + plus - minus`, field by field (token counts and dollars alike)."""
    mine, add, sub = totals.model_dump(), plus.model_dump(), minus.model_dump()
    return RunTotals.model_validate(_combine(mine, add, sub))


def _combine(mine: dict[str, object], add: dict[str, object], sub: dict[str, object]) -> dict[str, object]:
    out: dict[str, object] = {}
    for key, value in mine.items():
        plus, minus = add.get(key), sub.get(key)
        if isinstance(value, dict) and isinstance(plus, dict) and isinstance(minus, dict):
            out[key] = _combine(value, plus, minus)
        elif isinstance(value, int | float) and isinstance(plus, int | float) and isinstance(minus, int | float):
            out[key] = max(value + plus - minus, 0)
        else:
            out[key] = value
    return out


def take_entry(state: RunState, feature_id: str, artifact: Artifact, status: FeatureStatus,
               reason: str | None = None) -> FeatureState:
    """Put the artifact's entry for `feature_id` into `state`, with `status` (and `reason`)."""
    entry = artifact.state.features[feature_id].model_copy(deep=True)
    entry.status, entry.finishing, entry.awaiting_check = status, None, None
    if reason is not None or status == "passed":
        entry.reason = reason
    state.features[feature_id] = entry
    state.iteration = max(state.iteration, entry.iteration or 0)
    return entry


def copy_log(paths: ProjectPaths, artifact: Artifact, feature_id: str, status: FeatureStatus,
             reason: str | None = None) -> None:
    """The artifact's log of `feature_id` into the project, its status as combined."""
    source = artifact.log(feature_id)
    try:
        log = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return  # no usable log: the state still records the feature
    if not isinstance(log, dict):
        return
    log["status"] = status
    if reason:
        log["combineReason"] = reason
    _write_json(paths.feature_log(feature_id), log)


def _write_json(path: Path, data: object) -> None:
    write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
