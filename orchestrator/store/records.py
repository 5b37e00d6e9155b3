"""The check and attempt records the state and the feature logs share, typed.

`CheckRecord` is a check's result as saved (the camelCase `VerificationResult` of
`orchestrator.run.verify`); `AttemptRecord` is one `attemptHistory` entry. Both keep the JSON
they always had on disk, so state files and logs of earlier versions still load.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer
from pydantic.alias_generators import to_camel

from orchestrator.json_types import JsonObject
from orchestrator.llm.pricing import TokenUsage


class CamelModel(BaseModel):
    """Saved with camelCase keys, readable with either spelling."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    def dump(self) -> JsonObject:  # a JSON object, keyed as saved
        return self.model_dump(mode="json", by_alias=True)


class Influencer(BaseModel):
    """A check-influencing file changed during the feature (`orchestrator.run.check_influence`)."""

    path: str
    kind: str
    change: str


class CheckRecord(CamelModel):
    """One check's result as saved: the camelCase `VerificationResult` (`orchestrator.run.verify`)."""

    command: str | None = None
    success: bool = False
    exit_code: int | None = None
    output: str = ""
    error: str | None = None
    skipped: bool = False
    attempt: int = 0
    # Only when there are some, so the usual result keeps its seven keys.
    influencers: list[Influencer] = Field(default_factory=list, exclude_if=lambda found: not found)


class ReCheck(CamelModel):
    """One passed feature's check, run again: by the regression guard, final verification or `verify`."""

    id: str  # the feature whose check it is
    command: str | None = None
    success: bool = False
    exit_code: int | None = None
    error: str | None = None
    duration_ms: int = 0


class AttemptRecord(CamelModel):
    """One `attemptHistory` entry. An attempt a kill cut short (`stop: "interrupted"`) is
    logged with its number, its stop and its (absent) verification only."""

    attempt: int
    stop: str | None = None  # the agent loop's stop reason, or "interrupted"
    turns: int = 0
    tool_calls: int = 0
    masked_outputs: int = 0
    error: str | None = None
    verification: CheckRecord | None = None
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
    guard re-runs it (`orchestrator.run.regression`). Paths are relative to the project root.
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
