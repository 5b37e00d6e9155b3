"""What the Context Agent needs from the orchestrator, as structural types."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol


class FeatureLike(Protocol):
    """The attributes of the orchestrator's spec feature that relevance uses."""

    id: str
    name: str
    category: str
    description: str
    depends_on: list[str]


ModelCall = Callable[..., Any]
"""Takes the keyword arguments of `anthropic` `client.messages.create(...)` and returns an SDK
`Message` (or anything with `.content` blocks carrying `.type`/`.text`). May raise anything."""
