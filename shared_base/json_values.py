"""The name for a JSON object whose shape is not one of ours (a record dumped for a prompt, an
event's fields): both packages pass such objects on, so the name lives at the bottom."""

from __future__ import annotations

from typing import Any

JsonObject = dict[str, Any]
"""A JSON object with no schema of ours."""
