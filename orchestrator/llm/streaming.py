"""One model call, streamed: the SDK's `messages.stream` helper, read to its final message.

Every call is streamed, the agent's, the summarizer's and the planner's: a long answer then
never waits on one idle HTTP read (the SDK refuses long non-streamed requests, and a proxy
drops a connection silent for minutes), output tokens can be shown as they arrive, and an
interrupt stops the call at once. What can go wrong mid-stream is classified like the rest:
the API's `error` event arrives as an `APIStatusError` on a 200 response, whose error type
says whether it is transient (`overloaded_error`, ...); a connection cut mid-body surfaces
as the transport's error, which the SDK does not wrap. Both are retried like any other
transient fault one level up (`client.py`).
"""

from __future__ import annotations

import sys
import threading
import warnings
from collections.abc import Callable
from typing import Any, ClassVar

import anthropic
import httpx2
from anthropic.types import Message, RawContentBlockDelta, RawContentBlockDeltaEvent

from orchestrator.json_types import ApiRequest
from orchestrator.llm.errors import MalformedResponse
from orchestrator.user_errors import OrchestrateError

# Error types of a mid-stream `error` event worth retrying: the API's own transient ones.
TRANSIENT_STREAM_ERRORS = frozenset({"overloaded_error", "api_error", "rate_limit_error", "timeout_error"})
# Characters per output token, roughly: only for showing progress, never for billing.
_CHARS_PER_TOKEN = 4


class StreamBroken(OrchestrateError):
    """The connection was lost in the middle of a streamed answer (transient)."""


def is_transient(err: BaseException) -> bool:
    """True for a fault worth another try: a connection problem, a malformed answer, a 408,
    409, 429 or 5xx, a transient `error` event mid-stream, a stream cut off."""
    if isinstance(err, (anthropic.APIConnectionError, MalformedResponse, anthropic.APIResponseValidationError,
                        StreamBroken)):
        return True
    mid_stream = stream_error_type(err)
    if mid_stream is not None:
        return mid_stream in TRANSIENT_STREAM_ERRORS
    if isinstance(err, anthropic.APIStatusError):
        return err.status_code in (408, 409, 429) or err.status_code >= 500
    return False


def stream_error_type(err: BaseException) -> str | None:
    """The error type of an API `error` event met mid-stream, or None for any other error."""
    if not isinstance(err, anthropic.APIStatusError) or err.status_code != 200:
        return None
    return err.type or "api_error"


SdkClient = anthropic.Anthropic | anthropic.AnthropicBedrock | anthropic.AnthropicVertex
"""The SDK client of one provider (`sdk.make_sdk_client`): each has the same `messages`."""


def stream_message(sdk: SdkClient, request: ApiRequest, on_output: Callable[[int], None]) -> Message:
    """The final message of `request`, streamed; `on_output(estimated output tokens so far)`
    is called as text, tool input and thinking arrive."""
    received, seen = 0, set[str]()
    try:
        with sdk.messages.stream(**request) as stream:
            for event in stream:
                kind = getattr(event, "type", None)
                seen.add(str(kind))
                if isinstance(event, RawContentBlockDeltaEvent):
                    received += _delta_chars(event.delta)
                    on_output(received // _CHARS_PER_TOKEN)
            if "message_start" not in seen:  # a body that is no event stream (a proxy's page, say)
                raise MalformedResponse("the answer is not an event stream of a message")
            if "message_stop" not in seen:
                raise StreamBroken("the answer's stream ended before its message_stop event")
            return stream.get_final_message()
    except httpx2.TransportError as err:
        raise StreamBroken(f"the connection was lost mid-answer: {err}") from None
    except ValueError as err:  # an event that is not JSON, a tool input that does not parse
        raise MalformedResponse(f"the answer's stream is malformed: {str(err)[:200]}") from None


def _delta_chars(delta: RawContentBlockDelta) -> int:
    if delta.type == "text_delta":
        return len(delta.text)
    if delta.type == "input_json_delta":
        return len(delta.partial_json)
    if delta.type == "thinking_delta":
        return len(delta.thinking)
    return 0  # a signature or a citation: no output the model writes


class LibraryWarnings:
    """Warnings a library raises during a call become one notice line each, said once.

    The SDK warns on every call about a deprecated model or setting, in Python's raw
    `file:line: UserWarning: ...` form; the user sees its first line once, as a note.
    """

    _lock: ClassVar[threading.Lock] = threading.Lock()
    _said: ClassVar[set[str]] = set()

    def __init__(self, say: Callable[[str], None]) -> None:
        self.say = say

    @classmethod
    def install(cls, say: Callable[[str], None] | None = None) -> None:
        """Route every warning shown from now on through `say` (stderr by default)."""
        if isinstance(getattr(warnings.showwarning, "__self__", None), cls):
            return  # already in place
        warnings.showwarning = cls(say or _to_stderr).show

    def show(self, message: Warning | str, category: type[Warning], *_args: Any, **_kwargs: Any) -> None:
        text = str(message).strip()
        line = text.splitlines()[0] if text else category.__name__
        with self._lock:
            if line in self._said:
                return
            self._said.add(line)
        self.say(f"note: {line}")


def _to_stderr(line: str) -> None:
    print(f"orchestrate: {line}", file=sys.stderr, flush=True)
