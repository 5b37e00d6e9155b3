"""The metering proxy against the packaged fake API, driven by plain streaming HTTP requests:
what it forwards, refuses, passes through, and books into the run's journal."""

from __future__ import annotations

from orchestrator.claude_code.metering.sse_usage import StreamUsage
from orchestrator.llm.costs.pricing import TokenUsage

MODEL = "claude-sonnet-5-5"


def test_usage_is_read_from_events_split_anywhere_and_the_later_count_wins():
    stream = (
        b'event: message_start\r\ndata: {"type":"message_start","message":{"model":"m","usage":'
        b'{"input_tokens":5,"output_tokens":1,"cache_read_input_tokens":7,"cache_creation_input_tokens":3}}}\r\n\r\n'
        b'event: ping\ndata: {"type":"ping"}\n\n'
        b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"tool_use"},'
        b'"usage":{"output_tokens":42,"cache_read_input_tokens":null}}\n\n'
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    )
    for size in (1, 7, len(stream)):
        reader = StreamUsage()
        for start in range(0, len(stream), size):
            reader.feed(stream[start:start + size])
        assert reader.complete and reader.stop_reason == "tool_use" and reader.model == "m"
        assert reader.usage == TokenUsage(input=5, output=42, cache_read=7, cache_write=3)
    broken = StreamUsage()
    broken.feed(stream.split(b"event: message_stop")[0] + b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error"}}\n\n')
    assert not broken.complete and broken.error_type == "overloaded_error"


