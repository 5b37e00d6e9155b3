"""`ContextInjection`: what goes into one feature's `## Project Context`, as chosen by
`injection.build_injection` and rendered by `render.render_project_context`."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from shared_base.json_values import JsonObject


class _Injected(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class InjectedDecision(_Injected):
    """A decision as shown: `- <text> (Feature <featureId>)`."""

    id: str
    text: str
    feature_id: str


class InjectedFailure(_Injected):
    """A failure as shown: `- <description>: <prevention>`."""

    id: str
    description: str
    prevention: str
    feature_id: str


class InjectedConstraint(_Injected):
    """A constraint as shown: `- <description>`."""

    id: str
    description: str
    feature_id: str


class ContextInjection(_Injected):
    """What `get_injection` returns and `## Project Context` renders."""

    feature_id: str
    summary: str = ""
    decisions: list[InjectedDecision] = Field(default_factory=list)
    failures: list[InjectedFailure] = Field(default_factory=list)
    constraints: list[InjectedConstraint] = Field(default_factory=list)
    omitted_constraints: int = 0
    """Active constraints left out for budget (0 when all are shown)."""
    token_count: int = 0
    """Estimated tokens of the rendered section; 0 when there is nothing to inject."""

    # JSON-ready: the camelCase fields, as `orchestrate context --json` would show them.
    def as_dict(self) -> JsonObject:
        """The camelCase dict of the injection."""
        return self.model_dump(by_alias=True)
