"""What the Context Agent needs from the orchestrator, as structural types."""

from __future__ import annotations

from typing import Protocol, Unpack

from context_agent.json_shapes import SummarizerRequest


class FeatureLike(Protocol):
    """The attributes of the orchestrator's spec feature that relevance uses."""

    id: str
    name: str
    category: str
    description: str
    depends_on: list[str]


class ModelCall(Protocol):
    """The summarizer's model call (the orchestrator's `ModelClient.summarizer_call`)."""

    def __call__(self, **request: Unpack[SummarizerRequest]) -> object:
        """Takes the keyword arguments of `anthropic` `client.messages.create(...)` and returns an SDK
        `Message` (or anything with `.content` blocks carrying `.type`/`.text`). May raise anything."""
