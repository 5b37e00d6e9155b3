"""Every kind of event a run emits, as one discriminated union (`Event`, keyed by `type`).

`events.jsonl` holds one a line (`Event.dump()`: camelCase keys, `type` and `ts` first), and
the renderers (`orchestrator.commands.rendering.output`) read the same models. An event with a key its
kind does not declare is refused: a new key is a new field here first.
"""

from __future__ import annotations

import time
from typing import Annotated, Literal

from pydantic import (
    ConfigDict,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    model_serializer,
    model_validator,
)
from pydantic.alias_generators import to_camel

from orchestrator.json_types import JsonObject
from orchestrator.llm.costs.pricing import TokenUsage
from orchestrator.store.records import CamelModel, CheckFailure, flat_check, nest_check
from orchestrator.store.run_state import FeatureState
from shared_base.check_result import CheckResult, Influencer


def _absent(value: object) -> bool:
    return value is None


def now_ms() -> int:
    """Milliseconds since the epoch: an event's `ts`."""
    return int(time.time() * 1000)


class _Event(CamelModel):
    """An event is built where it happens, `sink.emit(FeatureStarted(id=..., ...))`: its kind's
    `type` and the time (`ts`) fill themselves in."""

    model_config = ConfigDict(extra="forbid")

    type: str  # each kind narrows it to its name: the union's discriminator
    ts: int = Field(default_factory=now_ms)  # milliseconds since the epoch


class RunStarted(_Event):
    type: Literal["run_started"] = "run_started"
    run_id: str
    spec: str
    project: str
    selected: int
    already_passed: int
    model: str
    context: str
    billing: str | None = Field(None, exclude_if=_absent)  # who pays Claude Code's calls (`--agent claude-code`)
    # What earlier runs of the project spent, so that a resumed run's figures start from it (one scope: all runs).
    spent_tokens: int | None = Field(None, exclude_if=_absent)
    spent_usd: float | None = Field(None, exclude_if=_absent)


class FeatureStarted(_Event):
    type: Literal["feature_started"] = "feature_started"
    id: str
    name: str
    attempt: int
    max_attempts: int
    index: int
    total: int
    model: str | None = Field(None, exclude_if=_absent)  # the attempt's model (`--escalate-model`)
    escalated: bool = Field(False, exclude_if=lambda escalated: not escalated)


class ApiCall(_Event):
    """One model call of the agent: its usage and the run's totals after it."""

    type: Literal["api_call"] = "api_call"
    id: str | None = Field(None, exclude_if=_absent)  # the feature's, as on every event of a feature
    feature: str | None = None
    turn: int
    attempt: int | None = Field(None, exclude_if=_absent)  # the feature's attempt that made the call
    model: str | None = None  # the model that made this call
    usage: TokenUsage
    cost_usd: float
    stop_reason: str | None = None
    run_tokens: int
    run_cost_usd: float


class ToolCall(_Event):
    type: Literal["tool_call"] = "tool_call"
    id: str | None = Field(None, exclude_if=_absent)
    feature: str | None = None
    turn: int
    tool: str
    summary: str = ""
    is_error: bool = False


class Verification(_Event):
    """A feature's check result: the feature's id, then the check's keys (`CheckResult`'s, flat)."""

    type: Literal["verification"] = "verification"
    id: str
    check: CheckResult

    @model_validator(mode="before")
    @classmethod
    def _nest(cls, data: object) -> object:
        return nest_check(data)

    @model_serializer(mode="wrap")
    def _flat(self, handler: SerializerFunctionWrapHandler) -> JsonObject:
        return flat_check(handler(self), self.check)

    @classmethod
    def of(cls, feature_id: str, result: CheckResult) -> Verification:
        """The event of feature `feature_id`'s check `result`."""
        return cls(id=feature_id, check=result)


# The keys of a `feature_finished` event that are its feature's state, to that state's field.
_STATE_KEYS = {"status": "status", "attempts": "attempts", "durationMs": "duration_ms", "duration_ms": "duration_ms",
               "usage": "tokens", "costUsd": "cost_usd", "cost_usd": "cost_usd", "reason": "reason",
               "failedBranch": "failed_branch", "failed_branch": "failed_branch"}


class FeatureFinished(_Event):
    """A feature settled: its state as the run left it (`FeatureState` declares the fields), written
    flat beside its id: status, attempts, durationMs, tokens (the total), usage (the counts), costUsd,
    reason, failedBranch (where a failed feature's work was kept, when it was)."""

    type: Literal["feature_finished"] = "feature_finished"
    id: str
    state: FeatureState
    # The orchestrator process's own CPU time (user + sys, every thread) since it started, and its
    # finished subprocesses' (checks, git, sandbox) at this event: what the run costs the machine,
    # which a loaded machine does not inflate as it does wall time. Absent in runs before they existed.
    cpu_ms: int | None = Field(None, exclude_if=_absent)
    children_cpu_ms: int | None = Field(None, exclude_if=_absent)

    @model_validator(mode="before")
    @classmethod
    def _from_flat(cls, data: object) -> object:
        if not isinstance(data, dict) or "state" in data:
            return data
        # `tokens` is the total of `usage`; a key neither the event nor these name is left to be refused.
        state = {_STATE_KEYS[key]: value for key, value in data.items() if key in _STATE_KEYS}
        return {**{key: value for key, value in data.items() if key not in _STATE_KEYS and key != "tokens"},
                "state": state}

    @model_serializer(mode="plain")
    def _flat(self, info: SerializationInfo) -> dict[str, object]:
        entry, camel = self.state, info.by_alias
        event: dict[str, object] = {
            "type": self.type, "ts": self.ts, "id": self.id, "status": entry.status, "attempts": entry.attempts,
            "durationMs" if camel else "duration_ms": entry.duration_ms, "tokens": entry.tokens.total,
            "usage": entry.tokens, "costUsd" if camel else "cost_usd": round(entry.cost_usd, 6), "reason": entry.reason,
        }
        for key, value in (("failed_branch", entry.failed_branch), ("cpu_ms", self.cpu_ms),
                           ("children_cpu_ms", self.children_cpu_ms)):
            if value is not None:
                event[to_camel(key) if camel else key] = value
        return event


class RegressionCheck(_Event):
    """A passed feature's check (`checked`), re-run by the regression guard after feature `id`'s check passed.

    Written flat and short: the check's command, success, exit code and error, the duration, and
    the output only when there is some (the guard keeps a failed check's only)."""

    type: Literal["regression_check"] = "regression_check"
    id: str
    checked: str
    check: CheckResult
    duration_ms: int = 0

    @model_validator(mode="before")
    @classmethod
    def _nest(cls, data: object) -> object:
        return nest_check(data)

    @model_serializer(mode="wrap")
    def _flat(self, handler: SerializerFunctionWrapHandler) -> JsonObject:
        line = flat_check(handler(self), self.check)
        output = line.pop("output", "")
        for key in ("skipped", "attempt", "influencers", "refusedBy"):  # a re-run is never refused
            line.pop(key, None)
        return line | ({"output": output} if output else {})


class RegressionSummary(_Event):
    """One run of the regression guard after feature `id`: how many passed features it found
    affected, how many of their checks it ran, which failed, how many it left to final
    verification; the console's one line for the guard is built from it."""

    type: Literal["regression_summary"] = "regression_summary"
    id: str
    affected: int
    ran: int
    failed: list[str]
    deferred: int = 0
    duration_ms: int


class FinalVerification(_Event):
    """Every passed feature's check re-run on the final tree (by a run, or by `orchestrate verify`)."""

    type: Literal["final_verification"] = "final_verification"
    checked: int
    passed: int
    failed: list[str]
    duration_ms: int
    tree: str | None = None
    """`clean-checkout` (of `commit`) or `working-tree`: where the checks ran."""
    commit: str | None = None
    failures: list[CheckFailure] = Field(default_factory=list, exclude_if=lambda found: not found)
    """Each failed check with its output, in `failed`'s order."""


class FeatureBlocked(_Event):
    type: Literal["feature_blocked"] = "feature_blocked"
    id: str
    reason: str | None = None


class FeatureWaiting(_Event):
    """`--jobs N`: a ready feature waits for one at work that is predicted to change the same files."""

    type: Literal["feature_waiting"] = "feature_waiting"
    id: str
    waits_for: str
    files: list[str]


class Summarization(_Event):
    type: Literal["summarization"] = "summarization"
    trigger: str
    features: list[str]
    success: bool | None = None
    new_decisions: int | None = None
    new_failures: int | None = None
    error: str | None = None


class Checkpoint(_Event):
    type: Literal["checkpoint"] = "checkpoint"
    id: str
    sha: str


class Merge(_Event):
    """`--jobs N`: a feature's work through the merge queue onto the user's branch."""

    type: Literal["merge"] = "merge"
    id: str
    result: Literal["merged", "conflict", "recheck_failed"]
    attempt: int
    sha: str | None = Field(None, exclude_if=_absent)  # the checkpoint commit, when merged
    files: list[str] = Field(default_factory=list, exclude_if=lambda found: not found)  # conflicting files
    message: str | None = Field(None, exclude_if=_absent)


class RunFinished(_Event):
    type: Literal["run_finished"] = "run_finished"
    outcome: str
    exit_code: int
    passed: int
    failed: int
    blocked: int
    pending: int
    tokens: int
    usage: TokenUsage
    cost_usd: float
    duration_ms: int
    message: str | None = None
    # USD by model, when more than one model made calls (`--escalate-model`).
    cost_by_model: dict[str, float] | None = Field(None, exclude_if=_absent)
    # USD of calls cut off before their answer, booked at their worst case (in cost_usd, in no model's figure).
    unconfirmed_cost_usd: float | None = Field(None, exclude_if=_absent)
    unconfirmed_calls: int | None = Field(None, exclude_if=_absent)  # how many calls that covers
    # True when earlier runs of the project spent too: tokens and cost are all runs', duration this run's.
    resumed: bool | None = Field(None, exclude_if=_absent)


class NothingSelected(_Event):
    type: Literal["nothing_selected"] = "nothing_selected"
    message: str
    only: str | None = None
    shard: str | None = None


class DryRunPrompt(_Event):
    type: Literal["dry_run_prompt"] = "dry_run_prompt"
    id: str
    prompt: str


class Notice(_Event):
    """A warning or an error; from the Context Agent, with its event's kind and data. A note is
    shown only with -v (something that went wrong and was mended without anyone's help)."""

    type: Literal["warning", "error", "note"]
    message: str
    source: str | None = Field(None, exclude_if=_absent)
    # The Context Agent's own event data, as it reported it: free-form.
    details: JsonObject | None = Field(None, exclude_if=_absent)
    # A warning about one feature: its id, and the check-influencing files that were changed.
    id: str | None = Field(None, exclude_if=_absent)
    influencers: list[Influencer] | None = Field(None, exclude_if=_absent)


Event = Annotated[
    RunStarted | FeatureStarted | ApiCall | ToolCall | Verification | FeatureFinished | FeatureBlocked
    | FeatureWaiting | Summarization | Checkpoint | Merge | RunFinished | NothingSelected | DryRunPrompt | Notice | RegressionCheck
    | FinalVerification | RegressionSummary,
    Field(discriminator="type"),
]
EVENT: TypeAdapter[Event] = TypeAdapter(Event)


def parse_event(data: object) -> Event:
    """The event `data` (a JSON object, as in `events.jsonl`) describes; ValidationError if none."""
    return EVENT.validate_python(data)
