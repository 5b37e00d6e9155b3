"""Run state: `.autonomous/state/execution-state.json`, its model and its one writer.

Every change is saved atomically. A state file that cannot be read is set aside (never
deleted) and rebuilt from the per-feature logs, so passed features survive any damage.

Money is journaled per model call (`record_spend`): the worst case of a call before it is
sent, what it cost once its answer arrives. A run killed at any instant therefore never
records less than the API billed, and `--max-cost` holds across resumes.
"""

from __future__ import annotations

import json
import math
import time
import uuid
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_serializer, field_validator
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticSerializationError

from orchestrator.llm.pricing import TokenUsage
from orchestrator.spec.fields import is_safe_id
from orchestrator.store.atomic import append_jsonl, set_aside, write_text_atomic
from orchestrator.store.feature_log import UnusableLog, read_feature_log
from orchestrator.store.paths import ProjectPaths, is_project_key

FeatureStatus = Literal["pending", "in_progress", "passed", "failed", "blocked", "skipped"]
STATE_VERSION = 1
# Files above this size are not state we wrote; refuse to parse them.
MAX_STATE_BYTES = 64 * 1024 * 1024
# The journal is folded into a snapshot after as many lines as there are features (a save then
# costs O(1) a change), and before it passes this, so that it stays readable at any scale.
MAX_JOURNAL_BYTES = MAX_STATE_BYTES // 2
# A settled feature's check output is in its log; the state keeps output only for a retry.
_SETTLED = frozenset({"passed", "failed", "blocked", "skipped"})


def now_ms() -> int:
    return int(time.time() * 1000)


class CamelModel(BaseModel):
    """Saved with camelCase keys, readable with either spelling."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    def dump(self) -> dict:
        return self.model_dump(mode="json", by_alias=True)


def _unset(value: object) -> bool:
    return value is None


class CheckFiles(CamelModel):
    """The files a feature's check command named before the feature's first attempt: the ones
    protected at every attempt, so that a file the agent creates never becomes part of the check."""

    command_sha: str  # of the check command they were found for: a changed command finds them again
    files: list[str] = Field(default_factory=list)  # relative to the project root

    @field_validator("files")
    @classmethod
    def _inside_project(cls, files: list[str]) -> list[str]:
        for key in files:
            if not is_project_key(key):
                raise ValueError(f"check file {key[:60]!r} is not a path inside the project")
        return files


class AwaitingCheck(CamelModel):
    """An attempt whose agent loop finished and whose check result was not recorded yet.

    A run killed while the check ran resumes by running the check again, not the agent."""

    attempt: int
    record: dict = Field(default_factory=dict)  # the attempt's `attemptHistory` entry, without its verification
    report: dict | None = None  # the agent's report (it decides when the feature has no check)


class PassToFinish(CamelModel):
    """A passed feature whose checkpoint commit and bookkeeping may not have happened yet.

    The pass is recorded first, so a kill after the check never sends the feature to the
    model again; a resumed run finishes what is left, without the model."""

    checkpoint_message: str | None = None  # None: no checkpoint (--no-commit, or not a git repository)
    checkpoint_base: str | None = None  # HEAD before the commit; None when the branch had no commit


class FeatureState(CamelModel):
    status: FeatureStatus = "pending"
    attempts: int = 0  # attempts whose check has run; an interrupted attempt is redone
    started_at: int | None = None
    completed_at: int | None = None
    iteration: int | None = None  # the run's iteration counter when the feature finished
    text_hash: str = ""
    tokens: TokenUsage = Field(default_factory=TokenUsage)
    cost_usd: float = 0.0
    duration_ms: int = 0
    last_verification: dict | None = None  # camelCase VerificationResult of the last attempt
    reason: str | None = None  # why failed / blocked / skipped
    # Left out of the saved state while unset: most features never need them.
    check_files: CheckFiles | None = Field(None, exclude_if=_unset)
    awaiting_check: AwaitingCheck | None = Field(None, exclude_if=_unset)
    finishing: PassToFinish | None = Field(None, exclude_if=_unset)

    @field_serializer("last_verification")
    def _output_only_for_a_retry(self, value: dict | None) -> dict | None:
        # Up to 4,000 characters a feature: at 100,000 features with failures the state would
        # pass its own read limit. The feature log keeps the output.
        if value and value.get("output") and self.status in _SETTLED:
            return {**value, "output": ""}
        return value


class SummarizationSchedule(CamelModel):
    completed_since_summary: int = 0
    unsummarized: list[str] = Field(default_factory=list)
    summaries: int = 0
    last_summarized_at: int | None = None


class RunTotals(CamelModel):
    tokens: TokenUsage = Field(default_factory=TokenUsage)
    cost_usd: float = 0.0
    api_calls: int = 0
    summarizer_tokens: TokenUsage = Field(default_factory=TokenUsage)
    summarizer_cost_usd: float = 0.0
    # The worst case of calls whose answer never arrived (the run was killed or interrupted
    # while they were in flight): the API may have billed them, so it is part of `cost_usd`.
    unconfirmed_cost_usd: float = 0.0


class RunState(CamelModel):
    version: int = STATE_VERSION
    run_id: str = Field(default_factory=lambda: uuid.uuid4().hex[:12])
    spec_path: str = ""
    spec_hash: str = ""
    created_at: int = Field(default_factory=now_ms)
    updated_at: int = Field(default_factory=now_ms)
    iteration: int = 0
    features: dict[str, FeatureState] = Field(default_factory=dict)
    summarization: SummarizationSchedule = Field(default_factory=SummarizationSchedule)
    totals: RunTotals = Field(default_factory=RunTotals)
    recent_completed: list[str] = Field(default_factory=list)  # newest last, bounded
    stop_reason: str | None = None

    def feature(self, feature_id: str) -> FeatureState:
        entry = self.features.get(feature_id)
        if entry is None:  # not setdefault: building a FeatureState on every call is not free
            entry = self.features[feature_id] = FeatureState()
        return entry

    def count(self, status: FeatureStatus) -> int:
        return sum(1 for f in self.features.values() if f.status == status)


class StateStore:
    """Loads and saves the run state of one project.

    The snapshot (`execution-state.json`) is rewritten atomically; between snapshots each
    change of one feature is appended to a journal, so the cost of a save does not grow
    with the number of features. Loading reads the snapshot and replays the journal. The
    snapshot is compacted when the journal is as long as the feature list, and at the end
    of every run.
    """

    def __init__(self, paths: ProjectPaths, on_warning: Callable[[str], None] = lambda _m: None) -> None:
        self.paths = paths
        self.on_warning = on_warning
        self._journal_lines = 0
        self._journal_bytes = 0
        # This load recovered state that is not on disk as read (a file set aside, or rebuilt
        # from the logs): it is saved at once.
        self._must_save = False

    def load(self) -> RunState | None:
        """The saved state, None if there is none; a damaged file is set aside and rebuilt.

        Whatever was set aside, the recovered state is saved at once: the next reader finds
        it, instead of finding no state and starting over (losing the passed features).
        """
        path = self.paths.state_file
        self._must_save = False
        if not path.exists():
            if self.paths.state_journal.exists():
                # No snapshot (killed before the first one, or lost): what the logs prove, then the journal.
                return self._keep_recovered(self._replay_journal(self.rebuild_from_logs()))
            recovered = self.rebuild_from_logs()
            if not recovered.features:
                return None
            # The state file was deleted but the logs still prove what was done: keep it.
            self._must_save = True
            self.on_warning(
                f"no state file {path}; rebuilt from feature logs ({recovered.count('passed')} passed features "
                "kept); to start over instead, run with --fresh"
            )
            return self._keep_recovered(recovered)
        try:
            if path.stat().st_size > MAX_STATE_BYTES:
                raise ValueError(f"larger than {MAX_STATE_BYTES} bytes")
            text = path.read_bytes().decode("utf-8")
            try:  # parsed straight into the model: a third less time than through json.loads
                state = RunState.model_validate_json(text)
            except ValidationError:  # the same failure again, for json's or pydantic's usual message
                state = RunState.model_validate(json.loads(text))
            _check_ids(state)
        except (ValueError, UnicodeDecodeError, ValidationError, RecursionError) as err:
            backup = set_aside(path, self.paths.backups_dir)
            self._must_save = True
            recovered = self.rebuild_from_logs()
            self.on_warning(
                f"state file {path} could not be read ({_reason(err)}); set aside as {backup}; "
                f"rebuilt from feature logs ({recovered.count('passed')} passed features kept)"
            )
            return self._keep_recovered(self._replay_journal(recovered))
        return self._keep_recovered(self._replay_journal(state))

    def _keep_recovered(self, state: RunState) -> RunState:
        if self._must_save:
            try:
                self.save(state)
            except OSError as err:
                self.on_warning(f"the recovered state could not be saved: {err}")
        return state

    def save(self, state: RunState) -> None:
        """Write a full snapshot and start a new journal."""
        state.updated_at = now_ms()
        write_text_atomic(self.paths.state_file, _snapshot_text(state))
        # Only after the snapshot is safely in place may the journal it contains go.
        self.paths.state_journal.unlink(missing_ok=True)
        self._journal_lines = self._journal_bytes = 0

    def record(self, state: RunState, feature_id: str | None = None, *, fsync: bool = True) -> None:
        """Persist a change to one feature (and the run-level counters) cheaply.

        `fsync=False` only flushes: enough to survive a killed process, and the next fsynced
        line carries it to disk. For steps that a resumed run can safely do again."""
        if (feature_id is None or self._journal_lines >= max(64, len(state.features))
                or self._journal_bytes >= MAX_JOURNAL_BYTES):
            self.save(state)
            return
        state.updated_at = now_ms()
        entry = {
            "feature": feature_id,
            "state": state.features[feature_id].dump(),
            "iteration": state.iteration,
            "summarization": state.summarization.dump(),
            "totals": state.totals.dump(),
            "recentCompleted": state.recent_completed,
            "stopReason": state.stop_reason,
            "updatedAt": state.updated_at,
        }
        append_jsonl(self.paths.state_journal, entry, fsync=fsync)
        self._journal_lines += 1
        self._journal_bytes = self.paths.state_journal.stat().st_size

    def record_spend(self, spend: dict[str, Any]) -> None:
        """Journal one model call's money at once: `{"kind": "reserve", ...}` before it is sent
        (its worst case), `"call"` with its usage and cost when its answer arrives, `"release"`
        when the API answered with an error. Loading adds the calls to the totals, and a
        reservation left open (killed mid-call) as its worst case.

        Flushed, not fsynced: a killed process loses none of it, and the next fsynced line of
        the same file (every feature record) carries it to disk.
        """
        append_jsonl(self.paths.state_journal, {"spend": spend}, fsync=False)
        self._journal_lines += 1
        self._journal_bytes = self.paths.state_journal.stat().st_size

    def _replay_journal(self, state: RunState) -> RunState:
        path = self.paths.state_journal
        if not path.exists():
            return state
        try:
            if path.stat().st_size > MAX_STATE_BYTES:
                backup = set_aside(path, self.paths.backups_dir)
                self._must_save = True
                self.on_warning(f"state journal {path} is larger than {MAX_STATE_BYTES} bytes; set aside as {backup}")
                return state
            data = path.read_bytes()
        except OSError as err:
            self.on_warning(f"state journal {path} could not be read: {err}")
            return state
        raw_lines = data.splitlines()
        damaged = 0
        reserved: dict[str, Any] | None = None  # a call sent and not answered yet
        for number, raw in enumerate(raw_lines, start=1):
            try:
                entry = json.loads(raw.decode("utf-8"))
                if isinstance(entry, dict) and "spend" in entry:
                    reserved = _replay_spend(state, _checked_spend(entry["spend"]), reserved)
                    continue
                feature_id = entry["feature"]
                if not isinstance(feature_id, str) or not is_safe_id(feature_id):
                    raise ValueError(f"feature id {feature_id!r} is not a safe id")
                feature = FeatureState.model_validate(entry["state"])
                summarization = SummarizationSchedule.model_validate(entry["summarization"])
                totals = RunTotals.model_validate(entry["totals"])
                iteration = int(entry["iteration"])
            except (ValueError, KeyError, TypeError, UnicodeDecodeError, ValidationError, RecursionError):
                # A torn last line after a kill is expected; anything else is damage.
                torn = number == len(raw_lines) and not data.endswith(b"\n")
                damaged += 0 if torn else 1
                continue
            state.features[feature_id] = feature
            state.summarization, state.totals, state.iteration = summarization, totals, iteration
            state.stop_reason = entry.get("stopReason")
            if isinstance(entry.get("recentCompleted"), list):
                state.recent_completed = [str(x) for x in entry["recentCompleted"] if is_safe_id(str(x))]
        if reserved is not None:
            # Killed while a call was in flight: the API may have billed it, so its worst case counts.
            _add_cost(state, reserved, float(reserved["costUsd"]), None)
            state.totals.unconfirmed_cost_usd += float(reserved["costUsd"])
        self._journal_lines, self._journal_bytes = len(raw_lines), len(data)
        if damaged:
            # Its good lines are in `state` now; the file goes to the backups, never deleted.
            try:
                backup: object = set_aside(path, self.paths.backups_dir)
                self._must_save = True
            except OSError as err:
                backup = f"(could not be moved: {err})"
            self.on_warning(f"state journal {path}: {damaged} unreadable line(s) skipped; set aside as {backup}")
        return state

    def rebuild_from_logs(self) -> RunState:
        """A state holding what the per-feature logs prove: passed and failed features."""
        state = RunState()
        if not self.paths.logs_dir.is_dir():
            return state
        for log_path in sorted(self.paths.logs_dir.glob("*.json")):
            try:
                # A log proves only its own feature: read_feature_log checks that it names it.
                log = read_feature_log(log_path)
                if log.get("status") not in ("passed", "failed") or not is_safe_id(log_path.stem):
                    continue
                feature = FeatureState.model_validate({
                    "status": log["status"], "attempts": log.get("attempts") or 0,
                    "completedAt": log.get("completedAt"), "iteration": log.get("iteration"),
                    "tokens": log.get("tokens") or {}, "costUsd": log.get("costUsd") or 0.0,
                    "durationMs": log.get("durationMs") or 0,
                })
            except (OSError, UnusableLog, ValidationError):
                continue
            state.features[log_path.stem] = feature
            state.iteration = max(state.iteration, feature.iteration or 0)
            # What was spent stays spent: --max-cost counts it after a rebuild too.
            state.totals.tokens = state.totals.tokens + feature.tokens
            state.totals.cost_usd += feature.cost_usd
        return state


_SPEND_KINDS = ("reserve", "call", "release")


def _checked_spend(spend: Any) -> dict[str, Any]:
    """A journaled spend line as written by `record_spend`; ValueError for anything else."""
    if not isinstance(spend, dict) or spend.get("kind") not in _SPEND_KINDS:
        raise ValueError("not a spend entry")
    feature_id = spend.get("feature")
    if feature_id is not None and (not isinstance(feature_id, str) or not is_safe_id(feature_id)):
        raise ValueError(f"feature id {str(feature_id)[:60]!r} is not a safe id")
    cost = spend.get("costUsd", 0.0)
    if isinstance(cost, bool) or not isinstance(cost, (int, float)) or not math.isfinite(cost) or cost < 0:
        raise ValueError("costUsd is not a finite amount")
    if spend["kind"] == "call":
        TokenUsage.model_validate(spend.get("usage") or {})
    return spend


def _replay_spend(state: RunState, spend: dict[str, Any], reserved: dict[str, Any] | None) -> dict[str, Any] | None:
    """Apply one spend line to `state`; returns the reservation still open after it."""
    kind = spend["kind"]
    if kind == "reserve":
        if reserved is not None:  # two reservations in a row: the first one's answer never came
            _add_cost(state, reserved, float(reserved["costUsd"]), None)
            state.totals.unconfirmed_cost_usd += float(reserved["costUsd"])
        return spend
    if kind == "call":
        _add_cost(state, spend, float(spend["costUsd"]), TokenUsage.model_validate(spend.get("usage") or {}))
        if spend.get("unconfirmed") is True:  # interrupted in flight: its worst case
            state.totals.unconfirmed_cost_usd += float(spend["costUsd"])
        else:
            state.totals.api_calls += 1
    return None


def _add_cost(state: RunState, spend: dict[str, Any], cost: float, usage: TokenUsage | None) -> None:
    """Count one call's cost (and usage) in the run's totals and its feature's or the summarizer's."""
    usage = usage or TokenUsage()
    totals = state.totals
    totals.cost_usd += cost
    totals.tokens = totals.tokens + usage
    if spend.get("purpose") == "summarizer":
        totals.summarizer_cost_usd += cost
        totals.summarizer_tokens = totals.summarizer_tokens + usage
    elif spend.get("feature"):
        entry = state.feature(spend["feature"])
        entry.cost_usd += cost
        entry.tokens = entry.tokens + usage


def _snapshot_text(state: RunState) -> str:
    """The state as compact JSON (indented, it is 40% larger: 74 MB at 100,000 failed features,
    over the read limit), serialized by pydantic in one pass. Going through `dump()` builds the
    whole state as Python objects first: at 10,000 features a save then took 60 MB more memory
    instead of 13, and 4 times as long. A text pydantic cannot encode (a lone surrogate, as
    from a file name that is not UTF-8) takes that slower way, which escapes it."""
    try:
        return state.model_dump_json(by_alias=True) + "\n"
    except PydanticSerializationError:
        return json.dumps(state.dump(), separators=(",", ":")) + "\n"


def _check_ids(state: RunState) -> None:
    """Feature ids become file names and terminal output: a state naming others is not ours."""
    for feature_id in [*state.features, *state.recent_completed, *state.summarization.unsummarized]:
        if not is_safe_id(feature_id):
            raise ValueError(f"feature id {feature_id[:60]!r} is not a safe id")


def _reason(err: BaseException) -> str:
    """Why a state file could not be read, in a few words."""
    if isinstance(err, RecursionError):
        return "its JSON is nested too deeply"
    if isinstance(err, UnicodeDecodeError):
        return f"not UTF-8 at byte {err.start}"
    text = str(err).strip().splitlines()
    return text[0][:200] if text else type(err).__name__
