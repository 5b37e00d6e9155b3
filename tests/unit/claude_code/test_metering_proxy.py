"""The metering proxy against the packaged fake API, driven by plain streaming HTTP requests:
what it forwards, refuses, passes through, and books into the run's journal."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from orchestrator.claude_code.sse_usage import StreamUsage
from orchestrator.config import RunConfig
from orchestrator.demo.fake_api.server import FakeAPI
from orchestrator.llm.client import ModelClient
from orchestrator.llm.spend import Spend
from orchestrator.llm.pricing import PriceTable, TokenUsage
from orchestrator.store.paths import ProjectPaths
from orchestrator.store.run_state import RunState
from orchestrator.store.state import StateStore


REAL_KEY = "sk-ant-real-key-of-the-run-0123456789"
MODEL = "claude-sonnet-5-5"


class Books:
    """A client booking into a real state journal, and the events the proxy emitted."""

    def __init__(self, root: Path, max_cost: float | None = None) -> None:
        self.store = StateStore(ProjectPaths.for_project(root))
        self.spend = Spend(feature_id="feat-a")
        self.client = ModelClient(RunConfig(max_cost=max_cost).client_settings(), None, self.spend, journal=self.store.record_spend)
        self.events: list[tuple[str, dict[str, Any]]] = []

    def on_event(self, event: Any) -> None:
        self.events.append((event.type, event.dump()))

    def replayed(self) -> RunState:
        state = self.store.load()
        assert state is not None
        return state

    def kinds(self, kind: str) -> list[dict[str, Any]]:
        return [data for name, data in self.events if name == kind]


def _billed(fake: FakeAPI, model: str = MODEL) -> tuple[TokenUsage, float]:
    """What the fake billed, priced independently of the proxy's books."""
    total = fake.usage.total
    usage = TokenUsage(input=total.input_tokens, output=total.output_tokens, cache_read=total.cache_read_input_tokens,
                       cache_write=total.cache_creation_input_tokens)
    return usage, PriceTable().cost(model, usage)


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


