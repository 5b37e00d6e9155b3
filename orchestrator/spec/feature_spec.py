"""The native feature spec format: its pydantic models.

A spec file is read and checked by `orchestrator.spec.load.load_spec`; these models are what
the rest of the program works with once it is valid.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationInfo,
    model_validator,
)

from orchestrator.spec.fields import (
    DEFAULT_MAX_ATTEMPTS,
    MAX_FEATURES,
    Attempts,
    Command,
    FeatureId,
    Glob,
    Label,
    Name,
    Text,
)
from orchestrator.spec.graph import check_features

# The fields whose change means "this feature now asks for something else".
_CONTENT_FIELDS = ("id", "name", "description", "category", "acceptance", "verify", "depends_on")

# Validation context key: the loader has checked ids and dependencies already, with
# locations, so the model need not check them again.
GRAPH_CHECKED = "orchestrate.graph_checked"

# strict: JSON types must match exactly ("3" is not a number, 1 is not true).
# extra="ignore": unknown keys become warnings (`decode.unknown_keys`), not errors.
# use_attribute_docstrings: the docstrings below are the fields' descriptions.
_MODEL_CONFIG = ConfigDict(strict=True, extra="ignore", use_attribute_docstrings=True)


class Feature(BaseModel):
    """One feature to build: what it is, how to check it, what it needs first."""

    model_config = _MODEL_CONFIG

    id: FeatureId
    """Unique; used as a file name, so letters, digits, ".", "_" and "-" only."""
    name: Name
    """Short human-readable title (one line, at most 200 characters: it is the checkpoint's subject)."""
    description: Label
    """What to build; sent to the agent."""
    category: Label = "uncategorized"
    """Free-form group, used to pick relevant project context."""
    # default_factory, not []: pydantic deep-copies a literal default for every feature.
    acceptance: list[Text] = Field(default_factory=list)
    """Acceptance criteria, shown to the agent."""
    verify: Command | None = None
    """Shell command whose exit code 0 means the feature passes; else the top-level one."""
    depends_on: list[FeatureId] = Field(default_factory=list)
    """Ids of the features that must pass before this one starts."""
    max_attempts: Attempts | None = None
    """Attempts before the feature is failed; else the top-level value, else 3."""
    priority: int | None = None
    """Ordering hint used after spec order when picking the next runnable feature."""
    protected: list[Glob] = Field(default_factory=list)
    """Glob patterns of files the agent may not change (the checks stay honest)."""
    passes: bool = False
    """Quickstart format: true marks the feature as already done."""
    red: bool | None = None
    """Written by `orchestrate plan`: true when its check was seen failing on the tree before the
    feature was built (so the check means something); false when it was seen passing or failing
    for the wrong reason (flagged for review); absent when never checked."""

    def text_hash(self) -> str:
        """sha256 of the feature's content fields, to notice that its text changed."""
        content = {name: getattr(self, name) for name in _CONTENT_FIELDS}
        encoded = json.dumps(content, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
        return hashlib.sha256(encoded.encode("ascii")).hexdigest()


class SpecSettings(BaseModel):
    """The top-level fields of a native spec, apart from the features."""

    model_config = _MODEL_CONFIG

    project: Label = "project"
    """Project name; default: the spec file's name without its extension."""
    description: Text = ""
    """What the project is; part of the agent's system prompt."""
    verify: Command | None = None
    """Check command for every feature that has none of its own."""
    max_attempts: Attempts | None = None
    """Attempts for every feature that sets none of its own (default 3)."""


class FeatureSpec(SpecSettings):
    """A whole spec: the project settings and its features, in the order to build them."""

    features: list[Feature] = Field(min_length=1, max_length=MAX_FEATURES)
    """The features, in the order to build them."""
    _index: dict[str, int] = PrivateAttr(default_factory=dict)

    @model_validator(mode="after")
    def _ids_and_dependencies(self, info: ValidationInfo) -> FeatureSpec:
        # A spec built directly in code (tests, tools) keeps to the same rules; parse_spec
        # has checked already, with locations, and says so to skip a second pass.
        if info.context and info.context.get(GRAPH_CHECKED):
            return self
        raws = [{"id": f.id, "depends_on": f.depends_on} for f in self.features]
        problems = check_features(raws)
        if problems:
            raise ValueError("; ".join(text for _, text in problems))
        return self

    def model_post_init(self, __context: Any) -> None:
        self._index = {feature.id: i for i, feature in enumerate(self.features)}

    def feature(self, feature_id: str) -> Feature:
        """The feature with this id; KeyError if there is none."""
        i = self._index.get(feature_id)
        if i is None or i >= len(self.features) or self.features[i].id != feature_id:
            # The list was changed after validation (append, model_copy): index again.
            self._index = {feature.id: n for n, feature in enumerate(self.features)}
            i = self._index[feature_id]
        return self.features[i]

    def check_command(self, feature: Feature) -> str | None:
        """The command that verifies `feature`: its own `verify`, else the top-level one."""
        return feature.verify if feature.verify is not None else self.verify

    def attempts_for(self, feature: Feature) -> int:
        """How many attempts `feature` gets: its own limit, else the top-level one, else 3."""
        for value in (feature.max_attempts, self.max_attempts):
            if value is not None:
                return value
        return DEFAULT_MAX_ATTEMPTS

    def ids(self) -> list[str]:
        """Feature ids in spec order."""
        return [feature.id for feature in self.features]
