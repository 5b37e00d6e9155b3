"""The check and attempt records the state and the feature logs share, typed.

A check's outcome is `shared_base.check_result.CheckResult` (the Context Agent reads it too,
and imports nothing from here); `ReCheck` is a passed feature's check run again, and
`nest_check` / `flat_check` let an event or a working-memory entry hold a `CheckResult` and
still write its keys flat, as it always did.
`AttemptRecord` is one `attemptHistory` entry. All keep the JSON they always had on disk, so
state files and logs of earlier versions still load.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer, model_validator
from pydantic.alias_generators import to_camel

from orchestrator.json_types import JsonObject
from orchestrator.llm.costs.pricing import TokenUsage
from shared_base.check_result import CheckResult


class CamelModel(BaseModel):
    """Saved with camelCase keys, readable with either spelling."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    def dump(self) -> JsonObject:  # a JSON object, keyed as saved
        return self.model_dump(mode="json", by_alias=True)


def _check_keys() -> frozenset[str]:
    return frozenset(key for name, field in CheckResult.model_fields.items() for key in (name, field.alias or name))


def nest_check(data: object) -> object:
    """For a model holding a `CheckResult` as `check` and written flat (an event, a working-memory
    entry; `flat_check`): the check's keys of `data`, gathered under `check` (a `mode="before"`
    model validator's body). Data that already has `check`, or is not a dict, is left as it is."""
    if not isinstance(data, dict) or "check" in data:
        return data
    keys = _check_keys()
    held = {key: value for key, value in data.items() if key in keys}
    return {key: value for key, value in data.items() if key not in keys} | {"check": held}


def flat_check(dumped: JsonObject, check: CheckResult) -> JsonObject:
    """`dumped` (a model's dump, with `check` among its keys) with `check`'s keys in its place, as
    `CheckResult.dump` writes them: the check's keys are the holder's on disk, in their order."""
    line: JsonObject = {}
    for key, value in dumped.items():
        if key == "check":
            line.update(check.dump())
        else:
            line[key] = value
    return line


class ReCheck(CheckResult):
    """A passed feature's check run again (by the regression guard, final verification or
    `verify`): its `CheckResult`, with whose check it was and how long it took. Saved without the
    output, the attempt and the influencers: a log lists many re-checks and keeps them short."""

    id: str = ""  # the feature whose check it is
    duration_ms: int = 0

    @classmethod
    def of(cls, feature_id: str, result: CheckResult, duration_ms: int) -> ReCheck:
        output = "" if result.success else result.output
        return cls(**{**dict(result), "id": feature_id, "duration_ms": duration_ms, "output": output})

    @model_serializer(mode="wrap")
    def _id_first(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        data: dict[str, object] = handler(self)  # the keys in the order logs always had them
        for key in ("skipped", "attempt", "influencers"):
            data.pop(key, None)
        if not data.get("output"):  # a failed one's only: what `logs ID` shows
            data.pop("output", None)
        return {"id": data.pop("id"), **data}


class AttemptRecord(CamelModel):
    """One `attemptHistory` entry. An attempt a kill cut short (`stop: "interrupted"`) is
    logged with its number, its stop and its (absent) verification only."""

    attempt: int
    stop: str | None = None  # the agent loop's stop reason, or "interrupted"
    turns: int = 0
    tool_calls: int = 0
    masked_outputs: int = 0
    error: str | None = None
    verification: CheckResult | None = None
    # The passed features' checks the regression guard ran again after this attempt's own check passed.
    regression_checks: list[ReCheck] = Field(default_factory=list, exclude_if=lambda runs: not runs)
    # The model of the attempt's calls (absent from logs written before `--escalate-model`).
    model: str | None = Field(None, exclude_if=lambda model: model is None)
    # What the attempt's model calls used and cost, and its tool calls one line each
    # (`tool: what it did`): for `orchestrate logs ID`; absent from older logs.
    tokens: TokenUsage | None = Field(None, exclude_if=lambda usage: usage is None)
    cost_usd: float | None = Field(None, exclude_if=lambda cost: cost is None)
    tools: list[str] = Field(default_factory=list, exclude_if=lambda lines: not lines)

    @model_serializer(mode="wrap")
    def _short_when_interrupted(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        data: dict[str, object] = handler(self)
        if self.stop == "interrupted":
            return {key: value for key, value in data.items() if key in ("attempt", "stop", "verification")}
        return data


class Footprint(CamelModel):
    """The files a passed feature touched: what its checkpoint changed and what its check names.

    A later feature that changes one of them may break this feature's check, so the regression
    guard re-runs it (`orchestrator.run.checks.guard.regression`). Paths are relative to the project root.
    """

    changed: list[str] = Field(default_factory=list)
    check: list[str] = Field(default_factory=list)

    def files(self) -> set[str]:
        return {*self.changed, *self.check}


class Assessment(CamelModel):
    """What is known before a feature starts (the Checkpoint Agent's deterministic assessment)."""

    predicted_footprint: list[str] = Field(default_factory=list)
    affected: list[str] = Field(default_factory=list)  # passed features whose checks will be re-run
    history: list[str] = Field(default_factory=list)  # failures of related features, one line each


def _empty(value: object) -> bool:
    return not value


class ConflictMiss(CamelModel):
    """A merge conflict a feature met under `--jobs`: the files, the features merged meanwhile
    that changed them, and whether the prediction had foreseen the overlap (then only the
    schedule ran them together: nothing else was ready) or missed it."""

    files: list[str] = Field(default_factory=list)
    with_features: list[str] = Field(default_factory=list)
    foreseen: bool = False


class Prediction(CamelModel):
    """The Impact Agent's prediction of a feature's footprint, made before it starts
    (`orchestrator.run.checks.impact_agent.impact`), and, once it passed, how it compared with the truth."""

    # Empty lists are left out of the state: a prediction is kept for every feature of the run.
    writes: list[str] = Field(default_factory=list, exclude_if=_empty)  # the files its text names
    builds_on: list[str] = Field(default_factory=list, exclude_if=_empty)  # its dependencies' footprints
    reads: list[str] = Field(default_factory=list, exclude_if=_empty)  # the files the checks it will re-run read
    by_model: list[str] = Field(default_factory=list, exclude_if=_empty)  # the cheap model call's, when asked
    changed: int | None = Field(None, exclude_if=lambda value: value is None)  # files it changed, once passed
    hits: int | None = Field(None, exclude_if=lambda value: value is None)  # of those, how many were predicted
    missed: list[str] = Field(default_factory=list, exclude_if=_empty)  # changed, not predicted (the first few)
    conflicts: list[ConflictMiss] = Field(default_factory=list, exclude_if=_empty)

    def will_write(self) -> set[str]:
        """The files it is predicted to change: what two features at work at once must not share."""
        return {*self.writes, *self.by_model}

    def files(self) -> set[str]:
        return {*self.writes, *self.builds_on, *self.reads, *self.by_model}


class CheckFailure(CamelModel):
    """A passed feature's check that failed when run again (final verification, `verify`,
    `combine`): kept in the event that reports it, output and all (a check's output is a bounded
    tail), so every surface can show why. Written flat: the feature's id, then the check's
    command, exit code, error and output."""

    id: str
    check: CheckResult

    @model_validator(mode="before")
    @classmethod
    def _nest(cls, data: object) -> object:
        return nest_check(data)

    @model_serializer(mode="wrap")
    def _flat(self, handler: SerializerFunctionWrapHandler) -> JsonObject:
        line = flat_check(handler(self), self.check)
        return {key: line[key] for key in ("id", "command", "exitCode", "error", "output")}

    @classmethod
    def of(cls, feature_id: str, result: CheckResult) -> CheckFailure:
        return cls(id=feature_id, check=result)
