"""Names for the JSON the Context Agent passes on without owning its shape (it imports nothing
from `orchestrator`, so it keeps its own; see `orchestrator.json_types` for the rule)."""

from __future__ import annotations

from typing import Any

JsonObject = dict[str, Any]
"""A JSON object with no schema of ours: a record dumped for the summarizer's prompt or an event's fields."""

JsonSchema = dict[str, Any]
"""The JSON schema of the summarizer's structured answer."""

ApiRequest = dict[str, Any]
"""A Messages API request as the model-call function takes it."""
