"""Events: everything that happens in a run, as one dict each.

Every event is appended to `.autonomous/events.jsonl` (the event log) and handed to the
renderer chosen for the terminal (`orchestrator.commands.output`). Secrets are redacted first, so no
event, log line or output can carry the API key.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Protocol

from orchestrator.safety.secrets import redact_value
from orchestrator.store.atomic import append_jsonl


class Renderer(Protocol):
    def handle(self, event: dict[str, Any]) -> None: ...
    def close(self) -> None: ...


class EventSink:
    """Redacts, records and renders events."""

    def __init__(self, renderer: Renderer, log_path: Path | None = None) -> None:
        self.renderer = renderer
        self.log_path = log_path
        self._log_failed = False

    def emit(self, kind: str, **data: Any) -> dict[str, Any]:
        event = redact_value({"type": kind, "ts": int(time.time() * 1000), **data})
        if self.log_path is not None and not self._log_failed:
            try:
                append_jsonl(self.log_path, event, fsync=False)
            except OSError as err:
                # Losing the event log must not stop a run; say so once.
                self._log_failed = True
                self.renderer.handle({"type": "warning", "message": f"event log not written: {err}"})
        self.renderer.handle(event)
        return event

    def warn(self, message: str, **data: Any) -> None:
        self.emit("warning", message=message, **data)

    def context_event(self, kind: str, data: dict[str, Any]) -> None:
        """Adapter for the Context Agent's on_event callback."""
        message = data.get("message") or data.get("error") or kind
        level = "error" if kind.endswith("failed") else "warning"
        self.emit(level, message=f"context agent: {message}", source=kind, details=data)

    def close(self) -> None:
        self.renderer.close()
