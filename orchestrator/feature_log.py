"""`.autonomous/logs/<feature-id>.json`: one feature's record, rewritten as it progresses."""

from __future__ import annotations

from typing import Any

from orchestrator.atomic import write_json_atomic
from orchestrator.paths import ProjectPaths
from orchestrator.spec import Feature
from orchestrator.state import FeatureState


def build_feature_log(
    feature: Feature,
    entry: FeatureState,
    *,
    model: str,
    strategy: str,
    check_command: str | None,
    attempts_log: list[dict[str, Any]],
    report: dict[str, Any] | None,
    replay_stats: dict[str, int] | None = None,
) -> dict[str, Any]:
    """The log's content: the fields the product spec fixes, then the details."""
    log: dict[str, Any] = {
        "id": feature.id,
        "name": feature.name,
        "category": feature.category,
        "status": entry.status,
        "startedAt": entry.started_at,
        "completedAt": entry.completed_at,
        "iteration": entry.iteration,
        "attempts": entry.attempts,
        "verification": entry.last_verification,
        "verified": bool(check_command),
        "tokens": entry.tokens.dump(),
        "costUsd": round(entry.cost_usd, 6),
        "durationMs": entry.duration_ms,
        "model": model,
        "contextStrategy": strategy,
        "report": report,
        "reason": entry.reason,
        "attemptHistory": attempts_log,
    }
    if replay_stats is not None:
        log["replay"] = replay_stats
    return log


def write_feature_log(paths: ProjectPaths, log: dict[str, Any]) -> None:
    write_json_atomic(paths.feature_log(log["id"]), log)
