"""Units of issue 30: blocks sent back, stream faults classified, provider ids for every
model the SDK lists, library warnings as one note."""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import anthropic
import httpx2
import pytest

from orchestrator.llm.endpoint.providers import resolve_model
from orchestrator.llm.models import known_models
from orchestrator.llm.reply_blocks import reply_blocks
from orchestrator.llm.streaming import LibraryWarnings, StreamBroken, is_transient


def test_empty_text_is_dropped_unknown_types_are_named_and_thinking_goes_back_as_it_came():
    thinking = {"type": "thinking", "thinking": "hm", "signature": "sig"}
    content = [SimpleNamespace(type="text", text=""), thinking, {"type": "hologram", "x": 1},
               SimpleNamespace(type="tool_use", id="t1", name="bash", input={"command": "ls"}),
               {"type": "hologram", "x": 2}]

    kept, unknown = reply_blocks(content)

    assert kept == [thinking, {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "ls"}}]
    assert unknown == ["hologram"]


def _mid_stream_error(kind: str) -> anthropic.APIStatusError:
    response = httpx2.Response(200, request=httpx2.Request("POST", "http://127.0.0.1/v1/messages"))
    return anthropic.APIStatusError("stream error", response=response,
                                    body={"type": "error", "error": {"type": kind, "message": "m"}})


@pytest.mark.parametrize(("kind", "transient"), [("overloaded_error", True), ("api_error", True),
                                                  ("invalid_request_error", False)])
def test_an_error_event_mid_stream_is_retried_only_when_the_api_says_it_is_transient(kind, transient):
    assert is_transient(_mid_stream_error(kind)) is transient


def test_a_stream_cut_off_is_transient():
    assert is_transient(StreamBroken("cut"))


@pytest.mark.parametrize("provider", ["bedrock", "vertex"])
def test_every_model_the_sdk_lists_has_an_id_on_each_provider_without_a_fallback(provider):
    for model in known_models():
        assert resolve_model(provider, model).notice is None, model


def test_a_library_warning_is_one_note_line_said_once():
    said: list[str] = []
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        LibraryWarnings.install(said.append)
        for _ in range(3):
            warnings.warn("Using Claude with x and 'thinking.type=enabled' is deprecated.\nmore text", UserWarning,
                          stacklevel=1)
    assert said == ["note: Using Claude with x and 'thinking.type=enabled' is deprecated."]


def test_the_live_view_shows_output_tokens_as_a_stream_brings_them(monkeypatch):
    import io
    import time

    from rich.console import Console

    from orchestrator.commands.rendering.live_view import LiveRenderer
    from orchestrator.store.events import EventSink

    class _Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = _Terminal()
    monkeypatch.setattr("sys.stderr", _Terminal())
    renderer = LiveRenderer(console=Console(file=screen, force_terminal=True, width=160))
    try:
        EventSink(renderer).output_arriving(1234)  # what the model client reports mid-stream
        time.sleep(0.8)  # the view refreshes 4 times a second
    finally:
        renderer.close()
    assert "+1,234 arriving" in screen.getvalue()
