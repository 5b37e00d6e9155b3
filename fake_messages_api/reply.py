"""What the HTTP layer sends back (`Reply`), and a message as a streamed reply."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fake_messages_api.faults import Fault
from fake_messages_api.sse import bedrock_frames, message_events, sse_chunks, with_error_event


@dataclass
class Reply:
    """What the HTTP layer sends back."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    drop: bool = False
    """Close the connection without any response."""
    delay: float = 0.0
    """Seconds to wait (interruptibly) before sending."""
    chunks: list[bytes] | None = None
    """A streamed body (chunked transfer encoding), one chunk per event; `body` is then unused."""
    gap: float = 0.0
    """Seconds between chunks."""
    cut_after: int | None = None
    """Close the connection after this many chunks, mid-stream."""


def stream_reply(message: dict[str, Any], fault: Fault | None, provider: str, delay: float, gap: float) -> Reply:
    """`message` as an event stream: server-sent events, or Bedrock's event-stream frames."""
    events = message_events(message)
    cut_after = None
    if fault is not None and fault.kind == "stream_error":
        events = with_error_event(events, fault.after_events, fault.error_type, fault.message)
    elif fault is not None and fault.kind == "stream_drop":
        cut_after = fault.after_events
    elif fault is not None:
        gap = fault.gap
    if provider == "bedrock":
        return Reply(200, {"content-type": "application/vnd.amazon.eventstream"}, chunks=bedrock_frames(events),
                     gap=gap, cut_after=cut_after, delay=delay)
    return Reply(200, {"content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache"},
                 chunks=sse_chunks(events), gap=gap, cut_after=cut_after, delay=delay)
