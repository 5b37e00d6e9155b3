"""Events: everything that happens in a run, one typed event each (`event_kinds.Event`).

Code says what happened by building the event where it happens, `events.emit(Checkpoint(id=...,
sha=...))`: a misspelt field is a type error, not a line missing from the log.

Every event is appended to `.autonomous/events.jsonl` (the event log) and handed to the
renderer chosen for the terminal (`orchestrator.commands.rendering.output`). Secrets are redacted first, so no
event, log line or output can carry the API key.

A `Phase` (what a feature, or the run, is doing now: its check, the regression guard's 5th
check of 14, ...) is not an event: it goes to a renderer that draws phases (the live view)
and nowhere else, neither to the event log nor to `--json`, where it would only repeat the
events that follow.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from orchestrator.safety.credentials.redaction import redact_value
from orchestrator.store.disk.atomic import append_jsonl
from orchestrator.store.event_kinds import Event, Notice, parse_event
from shared_base.check_result import Influencer


class Renderer(Protocol):
    def handle(self, event: Event) -> None: ...
    def close(self) -> None: ...


@dataclass(frozen=True)
class Phase:
    """What `feature` (None: the run itself) is doing now, `done` of `total` steps when counted."""

    name: str  # "check", "regression", "merging", "final verification"
    feature: str | None = None
    done: int = 0
    total: int = 0


@runtime_checkable
class PhaseView(Protocol):
    """A renderer that shows phases (`LiveRenderer`)."""

    def show_phase(self, phase: Phase) -> None: ...


class EventSink:
    """Redacts, records and renders events."""

    def __init__(self, renderer: Renderer, log_path: Path | None = None) -> None:
        self.renderer = renderer
        self.log_path = log_path
        self._log_failed = False
        self._lock = threading.RLock()  # `--jobs N`: workers emit at once; each event is one whole line

    def emit(self, event: Event) -> Event:
        """Record and render `event` (`emit(Checkpoint(id=..., sha=...))`), with any secret in it
        redacted; returns the event as written."""
        event = parse_event(redact_value(event.dump()))
        with self._lock:
            self._write(event)
        return event

    def _write(self, event: Event) -> None:
        if self.log_path is not None and not self._log_failed:
            try:
                append_jsonl(self.log_path, event.dump(), fsync=False)
            except OSError as err:
                # Losing the event log must not stop a run; say so once.
                self._log_failed = True
                self.renderer.handle(Notice(type="warning", ts=event.ts, message=f"event log not written: {err}"))
        self.renderer.handle(event)

    def phase(self, name: str, feature: str | None = None, done: int = 0, total: int = 0) -> None:
        """Tell a renderer that draws phases what `feature` (or the run) is doing now."""
        if isinstance(self.renderer, PhaseView):
            with self._lock:
                self.renderer.show_phase(Phase(name, feature, done, total))

    def output_arriving(self, tokens: int) -> None:
        """A streamed call's output so far, for a live view only: not an event, never logged
        (the call's usage comes in its `api_call` event)."""
        show = getattr(self.renderer, "output_arriving", None)
        if show is not None:
            show(tokens)

    def warn(self, message: str, *, id: str | None = None, influencers: list[Influencer] | None = None) -> None:
        """A warning line; `id`: the feature it is about; `influencers`: the check-influencing files it names."""
        self.emit(Notice(type="warning", message=message, id=id, influencers=influencers))

    def context_event(self, kind: str, data: Mapping[str, Any]) -> None:
        """Adapter for the Context Agent's on_event callback: its event data is its own, free-form."""
        message = data.get("message") or data.get("error") or kind
        level: Literal["error", "warning"] = "error" if kind.endswith("failed") else "warning"
        self.emit(Notice(type=level, message=f"context agent: {message}", source=kind, details=dict(data)))

    def close(self) -> None:
        self.renderer.close()
