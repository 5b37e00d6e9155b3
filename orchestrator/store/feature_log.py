"""`.autonomous/logs/<feature-id>.json`: one feature's record, rewritten as it progresses.

`FeatureLog` is its one model (product spec section 4, step 7, then the details); it is
written by `write_feature_log` and read by `load_feature_log` (one file, raises) or
`find_feature_log` (a feature's log, None when there is none usable). Resume, the window
strategy, `status`'s rebuild and `logs` all read it through here.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path

from pydantic import (
    BaseModel,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
)

from orchestrator.json_types import AgentReport, JsonObject
from orchestrator.spec.feature_spec import Feature
from orchestrator.store.disk.atomic import write_text_atomic
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.records import Assessment, AttemptRecord
from orchestrator.store.run_state import FeatureProgress, FeatureState
from orchestrator.user_errors import OrchestrateError
from shared_base.check_result import CheckResult

# The log's keys in the file's order: the product spec's fields (section 4, step 7) first.
LOG_KEY_ORDER = (
    "id", "name", "category", "status", "started_at", "completed_at", "iteration", "attempts", "verification",
    "verified", "tokens", "cost_usd", "duration_ms", "model", "context_strategy", "report", "reason",
    "attempt_history", "replay", "footprint", "assessment", "failed_branch",
)
# A feature log is a few kilobytes; a bigger one is not ours, and not worth reading.
MAX_LOG_BYTES = 16 * 1024 * 1024


class UnusableLog(OrchestrateError):
    """A file in the logs directory that is not a feature log we can trust; says why."""


class ReplayStats(BaseModel):
    """What the `replay` strategy made of the working-memory log (snake_case, as section 7 names them)."""

    total_lines: int = 0
    parsed_entries: int = 0
    skipped_invalid_json: int = 0
    skipped_invalid_shape: int = 0


class FeatureLog(FeatureProgress):
    """The log's content: the feature's progress as the state records it (`FeatureProgress`,
    declared once), then what only the log keeps. Written in the format's key order
    (`LOG_KEY_ORDER`: the fields the product spec fixes first). Every field but `id` has a
    default: a log of an older version, or a partial one, still reads."""

    id: str
    name: str = ""
    category: str = ""
    verification: CheckResult | None = None  # the last check, its output whole (the state drops a settled one's)
    verified: bool = False
    model: str = ""
    context_strategy: str = ""
    # The agent's report as it gave it (`orchestrator.tools.report`): free-form beyond its summary.
    report: AgentReport | None = None
    attempt_history: list[AttemptRecord] = Field(default_factory=list)
    replay: ReplayStats | None = Field(None, exclude_if=lambda stats: stats is None)
    assessment: Assessment | None = Field(None, exclude_if=lambda value: value is None)

    @model_serializer(mode="wrap")
    def _in_the_formats_order(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> JsonObject:
        data: JsonObject = handler(self)
        keys = [_key(name, info.by_alias) for name in LOG_KEY_ORDER]
        return {key: data[key] for key in keys if key in data}

    def with_verdict(self, entry: FeatureState) -> FeatureLog:
        """This log with its feature's verdict as the state now holds it (status, reason, last
        check): what a verification after the log was written changed."""
        return self.model_copy(update={"status": entry.status, "reason": entry.reason,
                                       "verification": entry.last_verification})

    def proven_state(self) -> FeatureState | None:
        """The state this log proves its feature reached: a pass or a failure, with what it
        spent (`StateStore.rebuild_from_logs`); None for any other status."""
        if self.status not in ("passed", "failed"):
            return None
        return FeatureState(
            status="passed" if self.status == "passed" else "failed", attempts=self.attempts,
            completed_at=self.completed_at, iteration=self.iteration, tokens=self.tokens, cost_usd=self.cost_usd,
            duration_ms=self.duration_ms,
        )

    def summary(self) -> str | None:
        """The agent's own summary of the feature, when its report gave one as text."""
        value = (self.report or {}).get("summary")
        return value if isinstance(value, str) else None


def build_feature_log(
    feature: Feature,
    entry: FeatureState,
    *,
    model: str,
    strategy: str,
    check_command: str | None,
    attempts_log: list[AttemptRecord],
    report: AgentReport | None,  # the agent's report, free-form (see FeatureLog.report)
    replay_stats: ReplayStats | None = None,
    assessment: Assessment | None = None,
) -> FeatureLog:
    """The log of a feature as its state `entry` stands."""
    progress = entry.progress() | {"cost_usd": round(entry.cost_usd, 6)}
    return FeatureLog.model_validate(progress | {
        "id": feature.id, "name": feature.name, "category": feature.category,
        "verification": entry.last_verification, "verified": bool(check_command), "model": model,
        "context_strategy": strategy, "report": report, "attempt_history": attempts_log, "replay": replay_stats,
        "assessment": assessment,
    })


def log_json(log: FeatureLog, *, as_read: bool = False) -> str:
    """The log as indented JSON, the file's format; `as_read` leaves out what the file did not hold."""
    data = log.model_dump(mode="json", by_alias=True, exclude_unset=as_read)
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def write_feature_log(paths: ProjectPaths, log: FeatureLog) -> None:
    write_text_atomic(paths.feature_log(log.id), log_json(log))


def find_feature_log(paths: ProjectPaths, feature_id: str) -> FeatureLog | None:
    """The log of `feature_id`, None when it has none, or none that can be used."""
    try:
        return load_feature_log(paths.feature_log(feature_id))
    except (OSError, UnusableLog):
        return None


def load_feature_log(path: Path) -> FeatureLog:
    """The log at `path`, if it is one: a regular file (not a link) of at most `MAX_LOG_BYTES`,
    holding a UTF-8 JSON feature log that names its own feature (the file's name).

    Raises `UnusableLog` saying what is wrong, or `OSError` when it cannot be read at all.
    """
    raw = read_log_json(path)
    try:
        return FeatureLog.model_validate(raw)
    except ValidationError as err:
        raise UnusableLog(f"it is not a feature log ({_first_error(err)})") from None


def read_log_json(path: Path) -> JsonObject:
    """The JSON object in the log file at `path`, before its fields are checked (see
    `load_feature_log`): a file's content, free-form until validated."""
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


# Until the Context Agent reads the logs on its own (issue 14), it takes the raw object.
read_feature_log = read_log_json


def _key(name: str, by_alias: bool | None) -> str:
    return (FeatureLog.model_fields[name].alias or name) if by_alias else name


def _first_error(err: ValidationError) -> str:
    first = err.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "the log"
    return f"{where}: {first['msg']}, got {first.get('input')!r:.60}"
