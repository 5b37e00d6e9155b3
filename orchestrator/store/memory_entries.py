"""The entries the run appends to the working-memory log (product spec section 7), one model
each: `type` and `ts_ms` first, then the fields of the kind, with the keys the spec's replay
sends back to the model. A `wm_event` says which event it is in `event`.

Only the keys given are written (`dump`): a status change names either its reason, its
attempts or its attempt. Reading stays lenient (`working_memory.read_log`): replay sends back
any entry with a string `type` and a numeric `ts_ms`, whatever else it holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from orchestrator.json_types import AgentReport, JsonObject
from orchestrator.store.records import Influencer


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    type: str
    ts_ms: int


class _FeatureEntry(_Entry):
    feature_id: str | None = Field(None, alias="featureId")


class _WmEvent(_Entry):
    event: str  # each event narrows it to its name
    feature_id: str | None = Field(None, alias="featureId")


class TextInput(_FeatureEntry):
    type: Literal["text_input"]
    attempt: int
    text: str


class TextOutput(_FeatureEntry):
    type: Literal["text_output"]
    attempt: int
    stop: str | None = None
    text: str | None = None
    report: AgentReport | None = None  # the agent's report as it gave it: free-form


class StatusEvent(_WmEvent):
    type: Literal["wm_event"]
    event: Literal["status"]
    status: str
    reason: str | None = None
    attempts: int | None = None
    attempt: int | None = None


class ToolEvent(_WmEvent):
    type: Literal["wm_event"]
    event: Literal["tool_call"]
    tool: str | None = None
    summary: str | None = None
    is_error: bool | None = Field(None, alias="isError")


class CheckEvent(_WmEvent):
    """A check's result: the keys of `records.CheckResult`."""

    type: Literal["wm_event"]
    event: Literal["verification"]
    command: str | None = None
    success: bool
    exit_code: int | None = Field(None, alias="exitCode")
    output: str = ""
    error: str | None = None
    skipped: bool = False
    attempt: int
    influencers: list[Influencer] = Field(default_factory=list)
    refused_by: str | None = Field(None, alias="refusedBy", exclude_if=lambda by: by is None)


class Insight(_Entry):
    type: Literal["wm_insight"]
    trigger: str
    feature_ids: list[str] = Field(alias="featureIds")
    summary: str | None = ""
    success: bool | None = None
    source: str | None = None


WmEvent = Annotated[StatusEvent | ToolEvent | CheckEvent, Field(discriminator="event")]
MemoryEntry = Annotated[TextInput | TextOutput | WmEvent | Insight, Field(discriminator="type")]
_ENTRY: TypeAdapter[MemoryEntry] = TypeAdapter(MemoryEntry)


def entry_of(kind: str, ts_ms: int, data: Mapping[str, object]) -> MemoryEntry:
    """The entry of kind `kind` with the fields `data` (keyword arguments, by their JSON keys);
    `pydantic.ValidationError` for a kind or field this module does not declare."""
    return _ENTRY.validate_python({"type": kind, "ts_ms": ts_ms, **data})


def dump_entry(entry: MemoryEntry) -> JsonObject:  # a JSON object, as the spec's replay sends it
    """The entry's line: the keys it was given, in the order of its fields."""
    return entry.model_dump(mode="json", by_alias=True, exclude_unset=True)
