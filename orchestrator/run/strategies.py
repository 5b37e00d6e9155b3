"""Context strategies (`--context`): how history reaches the agent's prompt.

- compressed: the Context Agent's `## Project Context` section (default);
- replay: the whole working-memory log replayed as messages before the request;
- window: the last N completed features as request/outcome pairs in `<feature-history>`.
Each strategy returns prompt sections and history messages for one feature.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.spec.load import Feature
from orchestrator.store.feature_log import find_feature_log
from orchestrator.store.paths import ProjectPaths
from orchestrator.store.working_memory import read_log

REQUEST_MARKER = "CURRENT_FEATURE_REQUEST"


@dataclass
class StrategyContext:
    """What one feature gets from the chosen strategy."""

    sections: list[str] = field(default_factory=list)  # after ## Project Context
    history: list[dict[str, Any]] = field(default_factory=list)  # messages before the request
    request_prefix: str = ""
    replay_stats: dict[str, int] | None = None


def replay_messages(log_path: Path) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The log as messages: one per valid entry, three lines each, text_output as assistant."""
    parsed = read_log(log_path)
    messages = []
    for entry in parsed.entries:
        role = "assistant" if entry["type"] == "text_output" else "user"
        text = (
            f"WM_KIND={entry['type']}\n"
            f"ts_ms: {entry['ts_ms']}\n"
            f"WM_JSON: {json.dumps(entry, ensure_ascii=False, separators=(',', ':'))}"
        )
        messages.append({"role": role, "content": [{"type": "text", "text": text}]})
    if messages and messages[0]["role"] == "assistant":
        # The API wants a user turn first; say so rather than drop the entry.
        messages.insert(0, {"role": "user", "content": [{"type": "text", "text": "WM_KIND=history_start\nThe working-memory history follows."}]})
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


def build_strategy_context(
    strategy: str,
    feature: Feature,
    paths: ProjectPaths,
    *,
    recent_ids: Sequence[str],
    depth: int,
    interrupted_attempt: int | None,
) -> StrategyContext:
    """The sections, history and request prefix `strategy` gives this feature."""
    if strategy == "replay":
        history, stats = replay_messages(paths.working_memory)
        return StrategyContext(
            history=history,
            request_prefix=f"{REQUEST_MARKER} (feature {feature.id})",
            replay_stats=stats,
        )
    if strategy == "window":
        sections = [
            feature_history_section(paths, recent_ids, depth),
            pending_feature_section(feature, interrupted_attempt),
        ]
        return StrategyContext(sections=[s for s in sections if s])
    return StrategyContext()


StrategyBuilder = Callable[..., StrategyContext]
