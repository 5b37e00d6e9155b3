"""The run state's model: what `.autonomous/state/execution-state.json` holds.

`RunState` and its parts, saved with camelCase keys (`CamelModel`). Loading and saving them,
with the journal between snapshots, is `orchestrator.store.state`.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable
from typing import Literal

from pydantic import Field, field_serializer, field_validator

from orchestrator.json_types import AgentReport, JsonObject
from orchestrator.llm.costs.pricing import TokenUsage
from orchestrator.llm.costs.spend import RunTotals
from orchestrator.store.disk.paths import is_project_key
from orchestrator.store.records import AttemptRecord, Footprint, Prediction
from orchestrator.store.records import CamelModel as CamelModel  # where the state's modules always found it
from shared_base.check_result import CheckResult

# `regressed`: passed, then its check failed on a later tree; the next run rebuilds it.
# The reason of a feature found in_progress at the start of a run (its attempt was interrupted).
RESUMED_AFTER_INTERRUPT = "resumed after an interrupted attempt"
# `needs_review`: the agent reported the feature's check defective; a person reviews it, the next run retries.
FeatureStatus = Literal["pending", "in_progress", "passed", "failed", "blocked", "skipped", "regressed", "needs_review"]
STATE_VERSION = 1
# A settled feature's check output is in its log; the state keeps output only for a retry.
SETTLED_STATUSES = frozenset({"passed", "failed", "blocked", "skipped", "needs_review"})  # a feature no longer at work


def now_ms() -> int:
    return int(time.time() * 1000)


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
    # The attempt's `attemptHistory` entry without its verification; the agent's report, free-form as it gave it.
    record: AttemptRecord | None = None
    report: AgentReport | None = None  # decides when the feature has no check


class PassToFinish(CamelModel):
    """A passed feature whose checkpoint commit and bookkeeping may not have happened yet.

    The pass is recorded first, so a kill after the check never sends the feature to the
    model again; a resumed run finishes what is left, without the model."""

    checkpoint_message: str | None = None  # None: no checkpoint (--no-commit, or not a git repository)
    checkpoint_base: str | None = None  # HEAD before the commit; None when the branch had no commit


class FeatureProgress(CamelModel):
    """What a feature's work has come to: the fields the run's state and the feature's log
    (`store/feature_log.FeatureLog`) both record, declared once here for both."""

    status: FeatureStatus = "pending"
    attempts: int = 0  # attempts whose check has run; an interrupted attempt is redone
    started_at: int | None = None
    completed_at: int | None = None
    iteration: int | None = None  # the run's iteration counter when the feature finished
    tokens: TokenUsage = Field(default_factory=TokenUsage)
    cost_usd: float = 0.0
    duration_ms: int = 0
    reason: str | None = None  # why failed / blocked / skipped
    # A passed feature's files (`Footprint`); where a failed feature's work was kept (`orchestrate/failed/<id>`).
    footprint: Footprint | None = Field(None, exclude_if=_unset)
    failed_branch: str | None = Field(None, exclude_if=_unset)

    def progress(self) -> dict[str, object]:
        """These fields by name, to build another view of the same feature from."""
        return {name: getattr(self, name) for name in FeatureProgress.model_fields}


class FeatureState(FeatureProgress):
    """One feature in the run's state: its progress and what the run needs to go on with it."""

    text_hash: str = ""
    # The last attempt's check (`CheckResult.to_json()`, typed), as the run loop and prompts use it.
    last_verification: CheckResult | None = None
    # Left out of the saved state while unset: most features never need them.
    check_files: CheckFiles | None = Field(None, exclude_if=_unset)
    awaiting_check: AwaitingCheck | None = Field(None, exclude_if=_unset)
    finishing: PassToFinish | None = Field(None, exclude_if=_unset)
    prediction: Prediction | None = Field(None, exclude_if=_unset)  # its footprint foreseen before it starts
    # Whether a regressed feature's rebuild is still to feed its failure back.
    reopened: bool = Field(False, exclude_if=lambda value: not value)
    # The models the feature's attempts ran on, in the order first used (`--escalate-model`).
    models: list[str] = Field(default_factory=list, exclude_if=lambda models: not models)

    @field_serializer("last_verification")
    def _output_only_for_a_retry(self, value: CheckResult | None) -> JsonObject | None:
        # Up to 4,000 characters a feature: at 100,000 features with failures the state would
        # pass its own read limit. The feature log keeps the output.
        if value is None:
            return None
        if value.output and self.status in SETTLED_STATUSES:
            return value.model_copy(update={"output": ""}).dump()
        return value.dump()


class SummarizationSchedule(CamelModel):
    completed_since_summary: int = 0
    unsummarized: list[str] = Field(default_factory=list)
    summaries: int = 0
    last_summarized_at: int | None = None


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
    # `--agent claude-code`: the project's Claude Code configuration files when the run first began
    # (path -> sha256); a resumed run loads only what still matches (`claude_code.session.project_config`).
    claude_config_at_start: dict[str, str] | None = Field(None, exclude_if=_unset)

    def feature(self, feature_id: str) -> FeatureState:
        entry = self.features.get(feature_id)
        if entry is None:  # not setdefault: building a FeatureState on every call is not free
            entry = self.features[feature_id] = FeatureState()
        return entry

    def count(self, status: FeatureStatus) -> int:
        return sum(1 for f in self.features.values() if f.status == status)


def hit_rate(entries: Iterable[FeatureState]) -> tuple[int, int]:
    """(changed files foreseen, changed files) over the features whose footprint prediction was
    compared with what they changed (`orchestrator.run.checks.impact_agent.impact.score`)."""
    hits = changed = 0
    for entry in entries:
        if entry.prediction is not None and entry.prediction.changed is not None:
            hits += entry.prediction.hits or 0
            changed += entry.prediction.changed
    return hits, changed


def hit_rate_text(entries: Iterable[FeatureState]) -> str:
    hits, changed = hit_rate(entries)
    if not changed:
        return "footprint predictions: none compared yet"
    return f"footprint predictions: {hits}/{changed} changed file(s) foreseen ({100 * hits / changed:.0f}%)"
