"""What a streamed Messages API answer bills, read from its server-sent events as they pass.

The metering proxy hands the bytes on unchanged and feeds a copy here. The usage of a
streamed message comes in two events: `message_start` carries the input side (input tokens,
cache writes, cache reads) and one output token, `message_delta` the cumulative counts at the
end (output tokens, and on newer APIs the input side again). As the SDK does, a field of the
later event replaces the earlier one where it is given. The answer is complete only with its
`message_stop`; an `error` event or a stream that just ends leaves it incomplete, and the
proxy then books the call at its worst case.
"""

from __future__ import annotations

import json

from orchestrator.json_types import JsonObject
from orchestrator.llm.costs.pricing import TokenUsage

# The API's usage fields, as TokenUsage names them.
_FIELDS = {
    "input_tokens": "input",
    "output_tokens": "output",
    "cache_read_input_tokens": "cache_read",
    "cache_creation_input_tokens": "cache_write",
}
# An event is small; the one piece kept between chunks is an event not yet complete. Past this
# the piece is a block's content, never usage, and is dropped (the next blank line resynchronises).
_MAX_PENDING = 4 * 1024 * 1024


class StreamUsage:
    """Feed it a streamed answer's bytes (`feed`); it keeps the usage, model and stop reason."""

    def __init__(self) -> None:
        self._pending = b""
        self._counts: dict[str, int] = {}
        self.started = False  # message_start seen: the API accepted the call and began to answer
        self.complete = False  # message_stop seen: the whole answer arrived
        self.error_type: str | None = None  # the type of an `error` event, if one came
        self.stop_reason: str | None = None
        self.model: str | None = None

    @property
    def usage(self) -> TokenUsage:
        """The tokens billed so far by the events seen (complete only once `complete`)."""
        return _token_usage(self._counts)

    def feed(self, chunk: bytes) -> None:
        """Read the events completed by `chunk` (events may be split across chunks anywhere)."""
        data = (self._pending + chunk).replace(b"\r\n", b"\n")
        *events, self._pending = data.split(b"\n\n")
        if len(self._pending) > _MAX_PENDING:
            self._pending = b""
        for event in events:
            self._read_event(event)

    def _read_event(self, raw: bytes) -> None:
        lines = [line[5:].lstrip() for line in raw.split(b"\n") if line.startswith(b"data:")]
        if not lines:
            return
        try:
            event = json.loads(b"\n".join(lines))
        except ValueError:  # not JSON: nothing this reader needs (the client judges it)
            return
        if isinstance(event, dict):
            self._apply(event)

    def _apply(self, event: JsonObject) -> None:
        kind = event.get("type")
        if kind == "message_start" and isinstance(event.get("message"), dict):
            message = event["message"]
            self.started = True
            self.model = message.get("model") if isinstance(message.get("model"), str) else None
            self._counts.update(_counts(message.get("usage")))
        elif kind == "message_delta":
            self._counts.update(_counts(event.get("usage")))
            delta = event.get("delta")
            if isinstance(delta, dict) and isinstance(delta.get("stop_reason"), str):
                self.stop_reason = delta["stop_reason"]
        elif kind == "message_stop":
            self.complete = self.started
        elif kind == "error":
            error = event.get("error")
            self.error_type = str(error.get("type")) if isinstance(error, dict) else "error"


def _counts(usage: object) -> dict[str, int]:
    """The usage fields an event gives (absent, null or nonsense ones left out)."""
    if not isinstance(usage, dict):
        return {}
    return {field: value for field in _FIELDS if isinstance(value := usage.get(field), int)
            and not isinstance(value, bool) and value >= 0}


def _token_usage(counts: dict[str, int]) -> TokenUsage:
    return TokenUsage(**{name: counts.get(field, 0) for field, name in _FIELDS.items()})


def api_usage(usage: object) -> TokenUsage:
    """A usage object in the API's JSON shape (as a message, or Claude Code's result, reports it)."""
    return _token_usage(_counts(usage))


def message_usage(body: bytes) -> tuple[TokenUsage, str | None] | None:
    """The usage and stop reason of an answer that came whole (`stream: false`), or None when
    the body is not a message with usage."""
    try:
        message = json.loads(body)
    except ValueError:
        return None
    if not isinstance(message, dict) or not isinstance(message.get("usage"), dict):
        return None
    stop = message.get("stop_reason")
    return api_usage(message["usage"]), stop if isinstance(stop, str) else None


MAX_WHOLE_ANSWER_BYTES = 64 * 1024 * 1024  # an answer that is not streamed is kept to read its usage


class Answer:
    """An answer's bytes as they pass: a stream's events read at once, a whole answer kept to read."""

    def __init__(self, *, streamed: bool) -> None:
        self.streamed, self.reader, self.whole = streamed, StreamUsage(), bytearray()

    def take(self, chunk: bytes) -> None:
        if self.streamed:
            self.reader.feed(chunk)
        elif len(self.whole) < MAX_WHOLE_ANSWER_BYTES:
            self.whole += chunk
