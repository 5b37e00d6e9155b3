"""What `orchestrate context FEATURE` shows of the Impact Agent (`orchestrator.run.checks.impact_agent.impact`):
the feature's predicted footprint as the run keeps it in the state (or as it would be predicted
now, before any run), how it compared with the truth once the feature passed, the merge
conflicts it met, the run's hit rate so far, and the forward-looking line of its prompt."""

from __future__ import annotations

from orchestrator.run.checks.guard.regression import RegressionGuard
from orchestrator.run.checks.impact_agent.impact import predict
from orchestrator.run.checks.impact_agent.impact_note import forward_note
from orchestrator.spec.feature_spec import Feature, FeatureSpec
from orchestrator.store.run_state import RunState, hit_rate_text


def _listed(files: list[str]) -> str:
    return ", ".join(files) or "(none)"


def prediction_lines(feature: Feature, spec: FeatureSpec, state: RunState, guard: RegressionGuard) -> list[str]:
    entry = state.features.get(feature.id)
    stored = entry.prediction if entry is not None else None
    for other in spec.features:  # in memory only, so that the forward-looking line reads them as a run would
        known = state.features.get(other.id)
        if known is None or (known.status != "passed" and known.prediction is None):
            state.feature(other.id).prediction = predict(other, spec, state, guard)
    prediction = state.feature(feature.id).prediction or predict(feature, spec, state, guard)
    where = "kept in the state" if stored is not None else "as it would be predicted now"
    lines = [f"=== impact: feature {feature.id} (prediction {where}) ===",
             f"will change: {_listed(prediction.writes)}",
             f"builds on (its dependencies' footprints): {_listed(prediction.builds_on)}",
             f"reads (the checks it will re-run): {_listed(prediction.reads)}"]
    if prediction.by_model:
        lines.append(f"the model adds: {_listed(prediction.by_model)}")
    if prediction.changed is not None:
        missed = f"; missed: {_listed(prediction.missed)}" if prediction.missed else ""
        lines.append(f"compared once it passed: {prediction.hits}/{prediction.changed} changed file(s) foreseen{missed}")
    for miss in prediction.conflicts:
        verdict = "foreseen" if miss.foreseen else "missed by the prediction"
        lines.append(f"merge conflict in {_listed(miss.files)} with {_listed(miss.with_features)}: {verdict}")
    lines.append(hit_rate_text(state.features.values()))
    note = forward_note(feature, spec, state)
    lines.append(f"in its prompt: {note}" if note else "in its prompt: no later feature builds on what it changes")
    return lines
