"""Read-only commands: `context`; and `summarize`, which runs the summarizer now (`status` and
`logs` are `orchestrator.commands.listing`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from context_agent.project_memory import ContextAgent
from orchestrator.commands.arguments import read_spec
from orchestrator.commands.listing import load_state, shown, warn
from orchestrator.commands.prompt_preview.attempt_preview import (
    assessment_now,
    files_known,
    first_attempt_view,
    guard_without_checks,
)
from orchestrator.commands.prompt_preview.impact_view import prediction_lines
from orchestrator.commands.prompt_preview.token_count import count_line
from orchestrator.commands.rendering.output import PlainRenderer
from orchestrator.config import RunConfig
from orchestrator.llm.conversation import text_of
from orchestrator.run.attempt.context_view import feature_reader
from orchestrator.run.attempt.feature_prompt import feature_turn, strategy_system_prompt
from orchestrator.run.attempt.first_request import first_request, first_request_size
from orchestrator.run.attempt.strategies import STRATEGIES
from orchestrator.run.checks.assessment import prompt_line
from orchestrator.safety.credentials.redaction import redact
from orchestrator.spec.feature_spec import Feature, FeatureSpec
from orchestrator.spec.load import LoadedSpec
from orchestrator.store.disk.lock import LockHeld, RunLock
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.event_kinds import Summarization
from orchestrator.store.events import EventSink
from orchestrator.store.records import Assessment
from orchestrator.store.run_state import RunState, now_ms
from orchestrator.store.state import StateStore
from orchestrator.tools.registry import tool_definitions
from orchestrator.user_errors import UsageError
from shared_base.tokens import estimate_tokens


def _spec_for(paths: ProjectPaths, spec_path: Path | None) -> LoadedSpec:
    if spec_path is None:
        state = load_state(paths)
        if state is None or not state.spec_path:
            raise UsageError("which spec? pass --spec SPEC (no earlier run recorded one)")
        spec_path = Path(state.spec_path)
    return read_spec(spec_path)


def print_context(
    paths: ProjectPaths, config: RunConfig, spec_path: Path | None, feature_id: str | None, strategy: str,
    count: bool = False,
) -> int:
    """The context a feature would get under one strategy, or all three side by side."""
    if strategy not in (*STRATEGIES, "all"):
        raise UsageError(f"--strategy {strategy!r}: choose compressed, replay, window or all")
    loaded = _spec_for(paths, spec_path)
    spec = loaded.spec
    state = load_state(paths) if paths.state_file.exists() else None
    if feature_id is None:
        pending = [f for f in spec.features if not state or state.feature(f.id).status != "passed"]
        if not pending:
            raise UsageError("every feature has passed; name one: orchestrate context FEATURE")
        feature = pending[0]
    else:
        try:
            feature = spec.feature(feature_id)
        except KeyError:
            raise UsageError(f"unknown feature {feature_id!r} (ids: {', '.join(spec.ids()[:10])}{'…' if len(spec.ids()) > 10 else ''})") from None
    recent = state.recent_completed if state else []
    agent = ContextAgent(paths.root, features=spec.features, on_event=lambda k, d: warn(f"context agent: {d.get('message') or k}"))
    view = first_attempt_view(paths, config, loaded)
    assessment = assessment_now(feature, spec, state or RunState(), config)
    files = files_known(feature, spec, paths, state.features.get(feature.id) if state else None, assessment)
    for name in (STRATEGIES if strategy == "all" else (strategy,)):
        turn = feature_turn(feature, spec, name, paths, injections=agent, recent_ids=recent, depth=config.context_depth,
                            view=view, files=files)
        ctx, prompt = turn.context, turn.prompt
        injection, section = ctx.injection, ctx.project_context
        history_tokens = sum(estimate_tokens(text_of(m)) for m in ctx.history)
        context_text = section or "\n\n".join(ctx.sections)
        sys.stdout.write(f"=== {name}: feature {feature.id} ===\n")
        if name == "compressed":
            sys.stdout.write((section or "(no project context yet)") + "\n")
            sys.stdout.write(f"tokenCount: {injection.token_count if injection else 0}\n")
        elif name == "window":
            sys.stdout.write((context_text or "(no feature history yet)") + "\n")
            sys.stdout.write(f"tokenCount: {estimate_tokens(context_text)}\n")
        else:
            stats = ctx.replay_stats or {}
            sys.stdout.write(f"{len(ctx.history)} replayed message(s); {json.dumps(stats)}\n")
            sys.stdout.write(f"tokenCount: {history_tokens}\n")
        system = strategy_system_prompt(spec, name)
        size = first_request_size(system, tool_definitions(), ctx.history, prompt)
        sys.stdout.write(
            f"whole first request (estimate): {size.total} tokens (system prompt {size.system}, "
            f"tools {size.tools}, messages {size.messages})\n"
        )
        if count:
            request = first_request(system, tool_definitions(), ctx.history, prompt)
            sys.stdout.write(count_line(config, request, size.total))
        sys.stdout.write("\n")
    sys.stdout.write(_assessment_text(feature, spec, state or RunState(), config, assessment))
    return 0


def _assessment_text(feature: Feature, spec: FeatureSpec, state: RunState, config: RunConfig, found: Assessment) -> str:
    """The assessment `found`, and the Impact Agent's prediction, as `orchestrate context` prints them."""
    guard = guard_without_checks(spec, state, config)
    lines = [f"=== assessment: feature {feature.id} ===",
             f"predicted footprint: {', '.join(found.predicted_footprint) or '(none known)'}",
             f"may affect (checks re-run after it): {', '.join(found.affected) or '(none)'}",
             *(f"history: {line}" for line in found.history), prompt_line(found, spec),
             *prediction_lines(feature, spec, state, guard)]
    return "\n".join(shown(line) for line in lines if line) + "\n"


def _to_summarize(state: RunState, config: RunConfig) -> list[str]:
    """The features not yet summarized or, when every one is, the most recent ones."""
    return list(state.summarization.unsummarized) or list(state.recent_completed[-config.summarize_every:])


def run_summarize(paths: ProjectPaths, config: RunConfig, spec_path: Path | None) -> int:
    """Summarize the features not yet summarized (or, with none, the recent ones) now."""
    loaded = _spec_for(paths, spec_path)
    if not _to_summarize(load_state(paths) or RunState(), config):
        raise UsageError("nothing to summarize yet: no feature has completed")
    try:
        # A live run records into the same stores and state: writing beside it would lose
        # what it records while the summarizer is called, and it would overwrite our state.
        with RunLock(paths.lock_file, on_warning=warn):
            return _summarize_now(paths, config, loaded)
    except LockHeld as err:
        raise UsageError(f"cannot summarize now: {err}") from err


def _summarize_now(paths: ProjectPaths, config: RunConfig, loaded: LoadedSpec) -> int:
    from orchestrator.llm.client import ModelClient
    from orchestrator.llm.costs.spend import RunSpend, Spend
    from orchestrator.llm.endpoint.sdk import make_sdk_client

    settings = config.client_settings()
    sdk = make_sdk_client(settings, models=("summarizer_model",))  # ClientSetupError (a UsageError) without a key
    store = StateStore(paths, on_warning=warn)
    state = store.load() or RunState()
    ids = _to_summarize(state, config)
    if not ids:
        raise UsageError("nothing to summarize yet: no feature has completed")
    spend = Spend(run=RunSpend(state.totals))  # counting on from what the runs spent
    client = ModelClient(settings, sdk, spend, on_retry=warn, journal=store.record_spend)  # a kill loses no spend
    # Failures go to stderr and the event log, as during a run.
    events = EventSink(PlainRenderer(verbosity=-1), paths.events_log)
    agent = ContextAgent(paths.root, features=loaded.spec.features, model_call=client.summarizer_call,
                         summarizer_model=config.summarizer_model, on_event=events.context_event,
                         read_feature=feature_reader(paths), redact=redact)
    result = agent.summarize(ids, "manual")
    state.summarization.unsummarized, state.summarization.completed_since_summary = [], 0
    state.summarization.summaries += 1
    state.summarization.last_summarized_at = now_ms()
    state.totals = spend.run.snapshot()
    store.save(state)
    events.emit(Summarization(
        trigger="manual", features=ids, success=result.success,
        new_decisions=result.new_decisions, new_failures=result.new_failures, error=result.error,
    ))
    verdict = "ok" if result.success else f"fallback summary written ({result.error})"
    sys.stdout.write(f"summarized {len(ids)} feature(s): {verdict}\n")
    return 0
