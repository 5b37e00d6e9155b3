"""Default model ids both packages fall back to."""

from __future__ import annotations

DEFAULT_SUMMARIZER_MODEL = "claude-haiku-5-5"
"""The summarizer's model when none is given (the orchestrator's default when the SDK lists no Haiku)."""
