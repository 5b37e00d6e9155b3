"""`--dry-run`: print each feature's prompt as it would be sent; no key, no writes."""

from __future__ import annotations

from context_agent import ContextAgent, render_project_context
from orchestrator.config import RunConfig
from orchestrator.run.prompts import feature_prompt, system_prompt
from orchestrator.run.scheduler import ordered
from orchestrator.run.strategies import build_strategy_context
from orchestrator.spec.load import LoadedSpec
from orchestrator.spec.selection import select
from orchestrator.store.events import EventSink
from orchestrator.store.paths import ProjectPaths
from orchestrator.store.state import StateStore


def print_prompts(
    loaded: LoadedSpec, config: RunConfig, paths: ProjectPaths, events: EventSink, *,
    only: str | None = None, shard: str | None = None, resets: list[str] | None = None,
) -> None:
    """Emit the system prompt, then each selected feature's first prompt in run order."""
    spec = loaded.spec
    resets = resets or []
    selected = select(spec.ids(), {f.id: f.depends_on for f in spec.features}, only, shard)
    state = StateStore(paths).load() if paths.state_file.exists() else None
    context = ContextAgent(paths.root, features=spec.features, model_call=None, on_event=events.context_event)
    events.emit("dry_run_prompt", id="(system prompt)", prompt=system_prompt(spec, replay=config.context == "replay"))
    recent = state.recent_completed if state else []
    for feature in ordered(spec, selected):
        entry = state.features.get(feature.id) if state else None
        if (entry and entry.status == "passed" and feature.id not in resets) or (not entry and feature.passes):
            continue
        verification = entry.last_verification if entry and entry.attempts and feature.id not in resets else None
        strategy = build_strategy_context(
            config.context, feature, paths, recent_ids=recent, depth=config.context_depth, interrupted_attempt=None
        )
        injection = context.get_injection(feature.id) if config.context == "compressed" else None
        prompt = feature_prompt(
            feature, spec, verification=verification,
            project_context=render_project_context(injection) if injection else "",
            strategy_sections=strategy.sections, request_prefix=strategy.request_prefix,
        )
        if strategy.history:
            prompt = f"[{len(strategy.history)} replayed working-memory message(s) precede this request]\n\n{prompt}"
        events.emit("dry_run_prompt", id=feature.id, prompt=prompt)
