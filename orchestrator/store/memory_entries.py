"""The entries the run appends to the working-memory log (product spec section 7), one model
each: `type` and `ts_ms` first, then the fields of the kind, with the keys the spec's replay
sends back to the model. A `wm_event` says which event it is in `event`.

An entry is built where it happens, without its time: `WorkingMemory.append(TextInput(...))`
stamps `ts_ms`. Only the keys given are written (`dump_entry`), with `type`, `ts_ms` and a
`wm_event`'s `event` always: a status change names either its reason, its attempts or its
attempt. A check's result is held whole (`CheckEvent.check`) and written with its keys flat, as
`CheckResult.dump` writes them. Reading stays lenient (`working_memory.read_log`): replay sends back
any entry with a string `type` and a numeric `ts_ms`, whatever else it holds.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from orchestrator.json_types import AgentReport, JsonObject
from orchestrator.store.records import flat_check, nest_check
from shared_base.check_result import CheckResult

_ALWAYS_WRITTEN = frozenset({"type", "ts_ms", "event"})


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    type: str
    ts_ms: int = 0  # stamped by `WorkingMemory.append`

    def model_post_init(self, context: Any, /) -> None:
        # Written whether given or defaulted (`dump_entry` writes the keys given).
        self.__pydantic_fields_set__.update(_ALWAYS_WRITTEN & type(self).model_fields.keys())


class _FeatureEntry(_Entry):
    feature_id: str | None = Field(None, alias="featureId")


class _WmEvent(_Entry):
    event: str  # each event narrows it to its name
    feature_id: str | None = Field(None, alias="featureId")


class TextInput(_FeatureEntry):
    type: Literal["text_input"] = "text_input"
    attempt: int
    text: str


class TextOutput(_FeatureEntry):
    type: Literal["text_output"] = "text_output"
    attempt: int
    stop: str | None = None
    text: str | None = None
    report: AgentReport | None = None  # the agent's report as it gave it: free-form


class StatusEvent(_WmEvent):
    type: Literal["wm_event"] = "wm_event"
    event: Literal["status"] = "status"
    status: str
    reason: str | None = None
    attempts: int | None = None
    attempt: int | None = None


class ToolEvent(_WmEvent):
    type: Literal["wm_event"] = "wm_event"
    event: Literal["tool_call"] = "tool_call"
    tool: str | None = None
    summary: str | None = None
    is_error: bool | None = Field(None, alias="isError")


class CheckEvent(_WmEvent):
    """A feature's check result: the check's keys (`CheckResult`'s), flat after the feature's id."""

    type: Literal["wm_event"] = "wm_event"
    event: Literal["verification"] = "verification"
    check: CheckResult

    @model_validator(mode="before")
    @classmethod
    def _nest(cls, data: object) -> object:
        return nest_check(data)

    @model_serializer(mode="wrap")
    def _flat(self, handler: SerializerFunctionWrapHandler) -> JsonObject:
        return flat_check(handler(self), self.check)


class Insight(_Entry):
    type: Literal["wm_insight"] = "wm_insight"
    trigger: str
    feature_ids: list[str] = Field(alias="featureIds")
    summary: str | None = ""
    success: bool | None = None
    source: str | None = None


WmEvent = Annotated[StatusEvent | ToolEvent | CheckEvent, Field(discriminator="event")]
MemoryEntry = Annotated[TextInput | TextOutput | WmEvent | Insight, Field(discriminator="type")]


def dump_entry(entry: MemoryEntry) -> JsonObject:  # a JSON object, as the spec's replay sends it
    """The entry's line: the keys it was given, in the order of its fields."""
    return entry.model_dump(mode="json", by_alias=True, exclude_unset=True)
