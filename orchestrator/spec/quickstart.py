"""The Anthropic autonomous-coding quickstart's `feature_list.json`, read as a native spec.

That file is a bare JSON array:

    [{"category": "functional", "description": "...", "steps": ["..."], "passes": false}]

Each entry becomes a native feature: id `feature-001`, `feature-002`, ... (by position),
a name taken from the description, `steps` as acceptance criteria, `passes` kept.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from orchestrator.spec.fields import Label, Text
from orchestrator.spec.spec_errors import translate

NAME_LENGTH = 60


class QuickstartEntry(BaseModel):
    """One entry of a quickstart `feature_list.json`."""

    model_config = ConfigDict(strict=True, extra="ignore")

    category: Label = "uncategorized"
    description: Label
    steps: list[Text] = []
    passes: bool = False


def quickstart_id(position: int) -> str:
    """The generated id of the entry at 0-based `position`: 0 -> `feature-001`."""
    return f"feature-{position + 1:03d}"


def derive_name(description: str, limit: int = NAME_LENGTH) -> str:
    """A short name from a description: its first line, cut at a word near `limit` chars."""
    line = next((ln for ln in description.splitlines() if ln.strip()), description)
    # A name is one line of a commit message: control characters become spaces.
    text = re.sub(r"[\s\x00-\x1f\x7f]+", " ", line).strip()
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ")
    # Cut at the last word boundary unless that would throw away most of the text.
    if space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:.-") + "..."


def to_native(entries: list[Any]) -> tuple[list[dict[str, object]], list[tuple[int, str]]]:
    """Native feature objects for the valid entries, and located problems for the others."""
    features: list[dict[str, object]] = []
    problems: list[tuple[int, str]] = []
    for position, raw in enumerate(entries):
        try:
            entry = QuickstartEntry.model_validate(raw)
        except ValidationError as exc:
            problems += [(position, text) for text in translate(exc, f"[{position}]")]
            continue
        features.append(
            {
                "id": quickstart_id(position),
                "name": derive_name(entry.description) or quickstart_id(position),
                "description": entry.description,
                "category": entry.category,
                "acceptance": entry.steps,
                "passes": entry.passes,
            }
        )
    return features, problems
