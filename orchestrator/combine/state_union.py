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
from orchestrator.combine.untrusted import UnsafeArtifact
from orchestrator.llm.costs.spend import RunTotals
from orchestrator.store.disk.atomic import write_text_atomic
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.records import CamelModel
from orchestrator.store.run_state import FeatureState, FeatureStatus, RunState

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


def refuse_shrunk_spend(artifact: Artifact, imports: CombinedImports) -> None:
    """Refuse an artifact whose run was imported before with more spent than it now records:
    a run's totals only grow, so it is a forgery (or another run reusing the id)."""
    before = imports.imports.get(artifact.state.run_id)
    if before is None:
        return
    shrunk = _shrunk(before.model_dump(by_alias=True), artifact.state.totals.model_dump(by_alias=True), "totals")
    if shrunk:
        raise UnsafeArtifact(
            f"{artifact.directory}: run {artifact.state.run_id} was combined before with more spent than this "
            f"artifact records ({shrunk[0]}); a run's spend never shrinks, so the artifact is refused"
        )


def _shrunk(before: dict[str, object], now: dict[str, object], where: str) -> list[str]:
    found: list[str] = []
    for key, was in before.items():
        value = now.get(key, 0)
        if isinstance(was, dict):
            found += _shrunk(was, value if isinstance(value, dict) else {}, f"{where}.{key}")
        elif isinstance(was, int | float) and isinstance(value, int | float) and value < was:
            found.append(f"{where}.{key}: {was} before, {value} now")
    return found


def add_spend(state: RunState, artifact: Artifact, imports: CombinedImports) -> None:
    """Add to `state`'s totals what `artifact`'s run spent and was not added before.

    Field by field and never negative: whatever an artifact says, the totals never go down
    (`Artifact` refuses negative numbers, `refuse_shrunk_spend` a run's totals that shrank)."""
    theirs = artifact.state.totals
    before = imports.imports.get(artifact.state.run_id, RunTotals())
    state.totals = grown_totals(state.totals, theirs, before)
    imports.imports[artifact.state.run_id] = RunTotals.model_validate(
        _grown(before.model_dump(), theirs.model_dump(), before.model_dump(), add=False))


def grown_totals(totals: RunTotals, theirs: RunTotals, before: RunTotals) -> RunTotals:
    """`totals` plus what `theirs` (a shard run's totals) has more than `before` (what was added
    for that run already), field by field; never less than `totals`."""
    return RunTotals.model_validate(_grown(totals.model_dump(), theirs.model_dump(), before.model_dump(), add=True))


def _grown(mine: dict[str, object], theirs: dict[str, object], before: dict[str, object], *,
           add: bool) -> dict[str, object]:
    """`mine` plus what `theirs` has more than `before`, per field (`add`), or the larger of
    `mine` and `theirs` (not `add`: the imports' high-water mark). Nested per-model spends too."""
    out: dict[str, object] = dict(mine)
    for key in {*mine, *theirs}:
        value, plus, minus = mine.get(key), theirs.get(key), before.get(key)
        if isinstance(plus, dict):
            out[key] = _grown(value if isinstance(value, dict) else {}, plus,
                              minus if isinstance(minus, dict) else {}, add=add)
        elif isinstance(plus, int | float):
            base = value if isinstance(value, int | float) else 0
            was = minus if isinstance(minus, int | float) else 0
            out[key] = base + max(plus - was, 0) if add else max(base, plus)
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
    try:
        log = json.loads(artifact.read_log(feature_id).decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return  # no usable log: the state still records the feature
    if not isinstance(log, dict) or log.get("id") != feature_id:
        return  # not this feature's log: nothing of it is copied
    log["status"] = status
    if reason:
        log["combineReason"] = reason
    _write_json(paths.feature_log(feature_id), log)


def _write_json(path: Path, data: object) -> None:
    write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
