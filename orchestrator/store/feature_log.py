"""`.autonomous/logs/<feature-id>.json`: one feature's record, rewritten as it progresses."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestrator.store.atomic import write_json_atomic
from orchestrator.store.paths import ProjectPaths

if TYPE_CHECKING:
    from orchestrator.spec.load import Feature
    from orchestrator.store.state import FeatureState

# A feature log is a few kilobytes; a bigger one is not ours, and not worth reading.
MAX_LOG_BYTES = 16 * 1024 * 1024


class UnusableLog(ValueError):
    """A file in the logs directory that is not a feature log we can trust; says why."""


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


def read_feature_log(path: Path) -> dict[str, Any]:
    """The log at `path`, if it is one: a regular file (not a link) of at most `MAX_LOG_BYTES`,
    holding a UTF-8 JSON object that names its own feature (the file's name).

    Raises `UnusableLog` saying what is wrong, or `OSError` when it cannot be read at all.
    """
    info = path.lstat()
    if stat.S_ISLNK(info.st_mode):
        raise UnusableLog("it is a symbolic link")
    if not stat.S_ISREG(info.st_mode):
        raise UnusableLog("it is not a regular file")
    if info.st_size > MAX_LOG_BYTES:
        raise UnusableLog(f"it is larger than {MAX_LOG_BYTES} bytes")
    try:
        log = json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError:
        raise UnusableLog("it is not UTF-8") from None
    except RecursionError:
        raise UnusableLog("its JSON is nested too deeply") from None
    except ValueError as err:
        raise UnusableLog(f"it is not JSON ({err})") from None
    if not isinstance(log, dict):
        raise UnusableLog("it is not a JSON object")
    if log.get("id") != path.stem:
        raise UnusableLog(f"it names feature {str(log.get('id'))[:60]!r}, not {path.stem!r}")
    return log
