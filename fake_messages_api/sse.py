"""A message as the API streams it (``stream: true``), as server-sent events or Bedrock's frames.

The event order is the API's: ``message_start`` (usage with the input side and one output
token), a ``ping``, then per content block ``content_block_start`` / ``content_block_delta``s /
``content_block_stop``, then ``message_delta`` (stop reason, cumulative usage) and
``message_stop``. Text arrives in several ``text_delta``s, a tool call's input as
``input_json_delta`` pieces of its JSON, thinking as ``thinking_delta``s closed by a
``signature_delta``; a block of a type the fake has no delta for (``redacted_thinking``,
server tool blocks, anything new) comes whole in its ``content_block_start``, as the API
sends those. Any client of the API can read this stream, not only this program.

Fault shapes: an ``error`` event after `n` events (`with_error_event`), or the connection
cut after `n` events (the handler's `Reply.cut_after`). Amazon Bedrock wraps each event in
an AWS event-stream frame (`bedrock_frames`).
"""

from __future__ import annotations

import base64
import binascii
import json
import struct
from typing import Any

Event = tuple[str, dict[str, Any]]
# A piece of text or JSON per delta: small enough that every answer arrives in several.
_PIECE = 64
# Set on a tool_use block by a plan: its input JSON is cut after this many characters (max_tokens).
CUT_AT = "_cut_at"


def _pieces(text: str) -> list[str]:
    return [text[i:i + _PIECE] for i in range(0, len(text), _PIECE)] or [""]


def _block_events(index: int, block: dict[str, Any]) -> list[Event]:
    where = {"index": index}
    kind = block.get("type")
    deltas: list[dict[str, Any]] = []
    if kind == "text":
        opening: dict[str, Any] = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": piece} for piece in _pieces(block["text"]) if piece]
    elif kind == "tool_use":
        opening = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        raw = json.dumps(block["input"])
        if isinstance(block.get(CUT_AT), int):
            raw = raw[: block[CUT_AT]]
        deltas = [{"type": "input_json_delta", "partial_json": piece} for piece in _pieces(raw)]
    elif kind == "thinking":
        opening = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [{"type": "thinking_delta", "thinking": piece} for piece in _pieces(block["thinking"]) if piece]
        deltas.append({"type": "signature_delta", "signature": block.get("signature", "")})
    else:
        opening = block
    events: list[Event] = [("content_block_start", {"type": "content_block_start", **where, "content_block": opening})]
    events += [("content_block_delta", {"type": "content_block_delta", **where, "delta": d}) for d in deltas]
    events.append(("content_block_stop", {"type": "content_block_stop", **where}))
    return events


def message_events(message: dict[str, Any]) -> list[Event]:
    """`message` (a complete message object) as the API's stream of events."""
    start = dict(message, content=[], stop_reason=None, stop_sequence=None)
    start["usage"] = dict(message["usage"], output_tokens=1)
    events: list[Event] = [("message_start", {"type": "message_start", "message": start}), ("ping", {"type": "ping"})]
    for index, block in enumerate(message["content"]):
        events += _block_events(index, block)
    delta: dict[str, Any] = {"stop_reason": message["stop_reason"], "stop_sequence": message.get("stop_sequence")}
    events.append(("message_delta", {"type": "message_delta", "delta": delta, "usage": message["usage"]}))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def with_error_event(events: list[Event], after: int, error_type: str, message: str) -> list[Event]:
    """The first `after` events, then the API's mid-stream ``error`` event (nothing after it)."""
    error = {"type": "error", "error": {"type": error_type, "message": message}}
    return [*events[:after], ("error", error)]


def sse_chunks(events: list[Event]) -> list[bytes]:
    """Each event as one server-sent event (``event:`` and ``data:`` lines)."""
    return [f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events]


def bedrock_frames(events: list[Event]) -> list[bytes]:
    """Each event as Bedrock's ``invoke-with-response-stream`` sends it: an AWS event-stream
    ``chunk`` frame whose payload is ``{"bytes": base64(event JSON)}``; an error event
    becomes an exception frame."""
    frames = []
    for name, data in events:
        if name == "error":
            error = data["error"]
            headers = {":message-type": "exception", ":exception-type": _bedrock_exception(error["type"]),
                       ":content-type": "application/json"}
            frames.append(_frame(headers, json.dumps({"message": error["message"]}).encode()))
            continue
        payload = json.dumps({"bytes": base64.b64encode(json.dumps(data).encode()).decode()}).encode()
        frames.append(_frame({":message-type": "event", ":event-type": "chunk", ":content-type": "application/json"},
                             payload))
    return frames


def _bedrock_exception(error_type: str) -> str:
    return {"overloaded_error": "serviceUnavailableException", "rate_limit_error": "throttlingException",
            "invalid_request_error": "validationException"}.get(error_type, "internalServerException")


def _frame(headers: dict[str, str], payload: bytes) -> bytes:
    """One AWS event-stream message: prelude (lengths, CRC), string headers, payload, CRC."""
    encoded = b"".join(
        struct.pack("B", len(name)) + name.encode() + b"\x07" + struct.pack(">H", len(value)) + value.encode()
        for name, value in headers.items()
    )
    total = 12 + len(encoded) + len(payload) + 4
    prelude = struct.pack(">II", total, len(encoded))
    prelude += struct.pack(">I", binascii.crc32(prelude) & 0xFFFFFFFF)
    body = prelude + encoded + payload
    return body + struct.pack(">I", binascii.crc32(body) & 0xFFFFFFFF)
