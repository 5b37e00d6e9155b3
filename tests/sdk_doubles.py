"""Stand-ins for the SDK client that answer `messages.create`; the model client streams, so
each also answers `messages.stream` with what `create` returns, as a stream already read."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any


class FinishedStream:
    """What `messages.stream(...)` returns, for an answer known at once."""

    def __init__(self, message: Any) -> None:
        self.message = message

    def __enter__(self) -> FinishedStream:
        return self

    def __exit__(self, *_exc: Any) -> None:
        return None

    def __iter__(self) -> Any:  # the events every complete stream has, around the answer
        return iter([SimpleNamespace(type="message_start"), SimpleNamespace(type="message_stop")])

    def get_final_message(self) -> Any:
        return self.message


class StreamsCreate:
    """Mixin for a double with `create`: `stream(**request)` answers with `create(**request)`."""

    def create(self, **request: Any) -> Any:
        raise NotImplementedError

    def stream(self, **request: Any) -> FinishedStream:
        return FinishedStream(self.create(**request))
