"""Helpers for pytest fixtures; `tests/conftest.py` wires them into `fake_api` and `api_env`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from fake_messages_api.server import FakeAPI


@contextmanager
def running_fake_api(**options: Any) -> Iterator[FakeAPI]:
    """A started `FakeAPI` (options as for its constructor), stopped on exit.

    On exit it also fails loudly if a plan or summarizer raised during the test, since
    the client only saw a 500 and the test might otherwise pass for the wrong reason.
    """
    fake = FakeAPI(**options)
    with fake:
        yield fake
    if fake.errors:
        raise AssertionError(f"the fake API's plans/summarizer raised: {fake.errors!r}")


def fake_api_env(fake: FakeAPI, api_key: str = "test-key") -> dict[str, str]:
    """``ANTHROPIC_BASE_URL`` and ``ANTHROPIC_API_KEY`` pointing at `fake`."""
    return fake.env(api_key)

