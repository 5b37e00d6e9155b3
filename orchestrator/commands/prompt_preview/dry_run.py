"""`--dry-run`: print each feature's prompt as it would be sent; no key, no writes."""

from __future__ import annotations

from context_agent.project_memory import ContextAgent
from orchestrator.commands.prompt_preview.attempt_preview import (
    assessment_now,
    files_known,
    first_attempt_view,
    next_attempt_view,
)
from orchestrator.config import RunConfig
from orchestrator.run.attempt.feature_prompt import appended_system_prompt, feature_turn, strategy_system_prompt
from orchestrator.run.base.feature_logs import FeatureLogs
from orchestrator.run.base.feature_order import ordered
from orchestrator.spec.load import LoadedSpec
from orchestrator.spec.selection import select
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.event_kinds import DryRunPrompt
from orchestrator.store.events import EventSink
from orchestrator.store.run_state import RunState
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
    # Claude Code's own system prompt comes first; what the run appends to it is shown.
    system = appended_system_prompt(spec) if config.agent == "claude-code" else strategy_system_prompt(spec, config.context)
    events.emit(DryRunPrompt(id="(system prompt)", prompt=system))
    recent = state.recent_completed if state else []
    first = first_attempt_view(paths, config, loaded)  # `## Workspace`, as the run's attempts show it
    logs = FeatureLogs(paths)
    for feature in ordered(spec, selected):
        entry = state.features.get(feature.id) if state else None
        if (entry and entry.status == "passed" and feature.id not in resets) or (not entry and feature.passes):
            continue
        verification = entry.last_verification if entry and entry.attempts and feature.id not in resets else None
        # A retry is told what the previous attempt left in the tree and what it reported, as in the run.
        view = next_attempt_view(first, paths, verification is not None, logs.previous(feature.id)[1])
        files = files_known(feature, spec, paths, entry, assessment_now(feature, spec, state or RunState(), config))
        turn = feature_turn(
            feature, spec, config.context, paths, injections=context, verification=verification,
            recent_ids=recent, depth=config.context_depth, view=view, files=files,
        )
        prompt = turn.prompt
        if turn.context.history:
            prompt = f"[{len(turn.context.history)} replayed working-memory message(s) precede this request]\n\n{prompt}"
        events.emit(DryRunPrompt(id=feature.id, prompt=prompt))
