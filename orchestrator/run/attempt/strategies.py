"""Context strategies (`--context`): how history reaches the agent's prompt, by name.

- compressed: the Context Agent's `## Project Context` section (default);
- replay: the whole working-memory log replayed as messages before the request;
- window: the last N completed features as request/outcome pairs in `<feature-history>`.

`STRATEGIES` maps each name to a `Strategy`: its builder (the sections, history messages and
request prefix it gives one feature) and what else the run does differently for it. Callers
look a strategy up here instead of comparing names; adding one is one entry.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from context_agent.injection.context_injection import ContextInjection
from context_agent.injection.render import render_project_context
from orchestrator.json_types import ApiMessage
from orchestrator.llm.conversation import assistant_text, user_text
from orchestrator.spec.feature_spec import Feature
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.feature_log import find_feature_log
from orchestrator.store.working_memory import read_log

REQUEST_MARKER = "CURRENT_FEATURE_REQUEST"

Message = ApiMessage


class InjectionSource(Protocol):
    """Where `compressed` gets a feature's project context (the Context Agent)."""

    def get_injection(self, feature_id: str, reserved_tokens: int = 0, files: Collection[str] = ()) -> ContextInjection: ...


@dataclass
class StrategyContext:
    """What one feature gets from the chosen strategy."""

    sections: list[str] = field(default_factory=list)  # after ## Project Context
    history: list[Message] = field(default_factory=list)  # messages before the request
    request_prefix: str = ""
    replay_stats: dict[str, int] | None = None
    project_context: str = ""  # the rendered `## Project Context` (compressed only)
    injection: ContextInjection | None = None  # what it was rendered from


@dataclass(frozen=True)
class StrategyInputs:
    """Everything a strategy may read to build one feature's context."""

    feature: Feature
    paths: ProjectPaths
    recent_ids: Sequence[str] = ()
    depth: int = 0
    interrupted_attempt: int | None = None
    injections: InjectionSource | None = None
    reserved_tokens: int = 0  # of the context budget, taken by a note in the prompt
    files: frozenset[str] = frozenset()  # what the feature is known to touch (which resolved failures it sees)


@dataclass(frozen=True)
class Strategy:
    """One `--context` choice."""

    name: str
    build: Callable[[StrategyInputs], StrategyContext]
    replays_memory: bool = False  # the system prompt then says how to read replayed entries
    summarizes_with_model: bool = False  # only a strategy that injects the summary pays for it


def replay_messages(log_path: Path) -> tuple[list[Message], dict[str, int]]:
    """The log as messages: one per valid entry, three lines each, text_output as assistant."""
    parsed = read_log(log_path)
    messages: list[Message] = []
    for entry in parsed.entries:
        text = (
            f"WM_KIND={entry['type']}\n"
            f"ts_ms: {entry['ts_ms']}\n"
            f"WM_JSON: {json.dumps(entry, ensure_ascii=False, separators=(',', ':'))}"
        )
        messages.append(assistant_text(text) if entry["type"] == "text_output" else user_text(text))
    if messages and messages[0]["role"] == "assistant":
        # The API wants a user turn first; say so rather than drop the entry.
        messages.insert(0, user_text("WM_KIND=history_start\nThe working-memory history follows."))
    return messages, parsed.stats()


def feature_history_section(paths: ProjectPaths, recent_ids: Sequence[str], depth: int) -> str:
    """`<feature-history>`: the last `depth` completed features, oldest first."""
    pairs = []
    for feature_id in list(recent_ids)[-depth:]:
        log = find_feature_log(paths, feature_id)
        if log is None:
            continue
        check = log.verification
        outcome = {
            "status": log.status,
            "attempts": log.attempts,
            "summary": log.summary(),
            "check": {"command": check.command, "exitCode": check.exit_code} if check else {"command": None, "exitCode": None},
        }
        request = {"id": log.id, "name": log.name, "category": log.category}
        pairs.append(
            f'<feature id="{feature_id}">\n<request>{json.dumps(request, ensure_ascii=False)}</request>\n'
            f"<outcome>{json.dumps(outcome, ensure_ascii=False)}</outcome>\n</feature>"
        )
    if not pairs:
        return ""
    return "<feature-history>\n" + "\n".join(pairs) + "\n</feature-history>"


def pending_feature_section(feature: Feature, interrupted_attempt: int | None) -> str:
    """`<pending-feature>`: this feature was interrupted and is being resumed."""
    if interrupted_attempt is None:
        return ""
    return (
        f'<pending-feature id="{feature.id}" status="awaiting completion">\n'
        f"Attempt {interrupted_attempt} of this feature was interrupted before its check ran. "
        "Files in the project may hold its partial work: inspect them and finish the feature.\n"
        "</pending-feature>"
    )


def _compressed(inputs: StrategyInputs) -> StrategyContext:
    if inputs.injections is None:
        return StrategyContext()
    injection = inputs.injections.get_injection(inputs.feature.id, inputs.reserved_tokens, inputs.files)
    return StrategyContext(project_context=render_project_context(injection) if injection else "", injection=injection)


def _replay(inputs: StrategyInputs) -> StrategyContext:
    history, stats = replay_messages(inputs.paths.working_memory)
    return StrategyContext(
        history=history, request_prefix=f"{REQUEST_MARKER} (feature {inputs.feature.id})", replay_stats=stats
    )


def _window(inputs: StrategyInputs) -> StrategyContext:
    sections = [
        feature_history_section(inputs.paths, inputs.recent_ids, inputs.depth),
        pending_feature_section(inputs.feature, inputs.interrupted_attempt),
    ]
    return StrategyContext(sections=[s for s in sections if s])


STRATEGIES: dict[str, Strategy] = {
    strategy.name: strategy
    for strategy in (
        Strategy("compressed", _compressed, summarizes_with_model=True),
        Strategy("replay", _replay, replays_memory=True),
        Strategy("window", _window),
    )
}


def strategy_named(name: str) -> Strategy:
    """The strategy called `name`; a `ValueError` naming the choices for any other name."""
    try:
        return STRATEGIES[name]
    except KeyError:
        raise ValueError(f"unknown context strategy {name!r} (choose {', '.join(STRATEGIES)})") from None
