"""Warnings and failures of the Context Agent, handed to the orchestrator's event log or,
without one, printed as one line on stderr. Reporting itself never raises."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from shared_base.json_values import JsonObject

EventHandler = Callable[[str, JsonObject], None]


class EventReporter:
    """Sends `(kind, data)` to `handler`; `data["message"]` is always a readable sentence."""

    def __init__(self, handler: EventHandler | None = None) -> None:
        self._handler = handler

    def emit(self, kind: str, message: str, **data: Any) -> None:
        """Report one event; falls back to stderr when the handler is missing or fails."""
        payload = {"message": message, **data}
        if self._handler is not None:
            try:
                self._handler(kind, payload)
                return
            except Exception as exc:  # a broken handler must not turn a warning into a crash
                message = f"{message} (event handler failed: {exc})"
        try:
            print(f"warning: context agent: {message}", file=sys.stderr)
        except Exception:
            pass
