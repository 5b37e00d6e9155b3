"""The events of a Bedrock or Vertex answer, as the SDK decoded them, written back as the
Anthropic API's server-sent events: the SDK's own decoder reads them back equal, and the
metering proxy's usage reader reads the bill from them."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx2
import pytest
from anthropic.types.beta import BetaRawMessageStreamEvent

from orchestrator.claude_code.metering.provider_relay import error_event, sse_event
from orchestrator.claude_code.metering.sse_usage import StreamUsage
from orchestrator.llm.costs.pricing import TokenUsage

EVENTS: list[dict[str, Any]] = [
    {"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": [],
        "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 12, "output_tokens": 1, "cache_read_input_tokens": 3000,
                  "cache_creation_input_tokens": 40}}},
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hello \u00e9\n\"quoted\""}},
    {"type": "content_block_stop", "index": 0},
    {"type": "content_block_start", "index": 1,
     "content_block": {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}},
    {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"command\": \"ls\"}"}},
    {"type": "content_block_stop", "index": 1},
    {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
     "usage": {"output_tokens": 57}},
    {"type": "message_stop"},
]


def _wire(events: list[dict[str, Any]]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def _decoded(body: bytes) -> list[BetaRawMessageStreamEvent]:
    """`body` read by the SDK's own stream decoder, as a client of the Anthropic API reads it."""
    client = anthropic.Anthropic(api_key="test", base_url="http://127.0.0.1:9")
    response = httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body,
                               request=httpx2.Request("POST", "http://127.0.0.1:9/v1/messages"))
    stream = anthropic.Stream(cast_to=BetaRawMessageStreamEvent, response=response, client=client)  # type: ignore[type-var]
    return list(stream)


def test_each_event_written_back_reads_back_equal_with_the_sdks_decoder():
    received = _decoded(_wire(EVENTS))
    written = b"".join(sse_event(event) for event in received)
    again = _decoded(written)
    assert [e.to_dict() for e in again] == [e.to_dict() for e in received] == EVENTS
    assert written.count(b"\n\n") == len(EVENTS) and b"event: message_delta\ndata: " in written


def test_the_usage_is_read_from_the_written_events():
    reader = StreamUsage()
    for event in _decoded(_wire(EVENTS)):
        reader.feed(sse_event(event))
    assert reader.complete and reader.stop_reason == "tool_use"
    assert reader.usage == TokenUsage(input=12, output=57, cache_read=3000, cache_write=40)


def test_an_error_after_the_answer_began_is_the_apis_error_event_and_leaves_the_answer_incomplete():
    reader = StreamUsage()
    reader.feed(b"".join(sse_event(e) for e in _decoded(_wire(EVENTS[:3]))) + error_event("overloaded_error", "busy"))
    assert not reader.complete and reader.error_type == "overloaded_error"
    with pytest.raises(anthropic.APIStatusError, match="busy"):
        _decoded(error_event("overloaded_error", "busy"))

