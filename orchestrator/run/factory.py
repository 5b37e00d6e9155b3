"""The real collaborators of a run, built as `orchestrate run` needs them.

`build_runner` is what the run command calls; `build_parts` is there for a test or a
benchmark that swaps one part (a timed verifier, a store that cannot write) and keeps the rest.
"""

from __future__ import annotations

from pathlib import Path

from context_agent.project_memory import ContextAgent
from orchestrator.config import RunConfig
from orchestrator.llm.client import ModelClient
from orchestrator.llm.costs.reservations import SpendPool
from orchestrator.llm.costs.spend import Spend
from orchestrator.llm.streaming import SdkClient
from orchestrator.run.attempt.agent_seam import BUILTIN_AGENT, Agent
from orchestrator.run.attempt.context_view import ContextView, feature_reader
from orchestrator.run.base.feature_logs import FeatureLogs
from orchestrator.run.checks.protection.outside_reads import spec_checks
from orchestrator.run.checks.running.check_command import CheckVerifier
from orchestrator.run.config_sandbox import command_environment
from orchestrator.run.runner import Runner, RunOptions, RunParts
from orchestrator.safety.credentials.redaction import redact
from orchestrator.spec.load import LoadedSpec
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.events import EventSink
from orchestrator.store.state import StateStore
from orchestrator.store.working_memory import WorkingMemory


def build_parts(
    loaded: LoadedSpec, config: RunConfig, paths: ProjectPaths, events: EventSink, *, sdk: SdkClient | None,
    store: StateStore | None = None, agent: Agent = BUILTIN_AGENT, workspace: Path | None = None,
) -> RunParts:
    """The model client (on `sdk`, the provider's SDK client), the Context Agent's view, the
    state store (`store`, or the project's), the working memory, the verifier and the feature
    logs of one project, and the `agent` that makes the attempts. The client journals its spend to
    the store; with `config.jobs` > 1 it books into the `SpendPool` every worker's client shares.
    `workspace` (`--branch`): where the agent's commands and the checks run, if not the project."""
    store = store or StateStore(paths, on_warning=events.warn)
    # SandboxUnavailable: exit 2, nothing run. Every command the model causes runs in this one.
    environment = command_environment(config, paths.root, loaded.path, events.warn, checks=spec_checks(loaded.spec))
    environment = environment.at(workspace) if workspace is not None else environment
    spend = Spend()
    pool = SpendPool(spend.run) if config.jobs > 1 else None
    client = ModelClient(config.client_settings(), sdk, spend, on_retry=events.warn, journal=store.record_spend,
                         pool=pool, on_output=events.output_arriving)
    context_agent = ContextAgent(
        # No client of our own (Claude Code on a Claude plan): the summary is folded without a model.
        paths.root, features=loaded.spec.features, model_call=client.summarizer_call if sdk is not None else None,
        summarizer_model=config.summarizer_model, on_event=events.context_event,
        read_feature=feature_reader(paths), redact=redact,
    )
    return RunParts(
        client=client,
        spend=spend,
        context=ContextView(context_agent, loaded.spec, paths, strategy=config.context, depth=config.context_depth),
        store=store,
        memory=WorkingMemory(paths.working_memory, on_warning=events.warn, backups_dir=paths.backups_dir),
        verifier=CheckVerifier(environment, timeout=config.check_timeout),
        logs=FeatureLogs(paths),
        environment=environment,
        agent=agent,
        pool=pool,
    )


def build_runner(
    loaded: LoadedSpec, config: RunConfig, options: RunOptions, paths: ProjectPaths, events: EventSink, *,
    sdk: SdkClient | None, agent: Agent = BUILTIN_AGENT,
) -> Runner:
    """A `Runner` with the real collaborators; with `config.jobs` > 1, on a `ParallelSchedule`."""
    if config.jobs > 1:
        from orchestrator.run.parallel.scheduler import ParallelSchedule

        parts = build_parts(loaded, config, paths, events, sdk=sdk, agent=agent)
        return Runner(loaded, config, options, paths, events, parts, schedule=ParallelSchedule)
    # --branch: checks run where the agent works
    parts = build_parts(loaded, config, paths, events, sdk=sdk, agent=agent, workspace=options.workspace)
    return Runner(loaded, config, options, paths, events, parts)
