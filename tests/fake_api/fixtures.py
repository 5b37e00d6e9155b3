"""Helpers the lead wires into ``tests/conftest.py`` (this package defines no fixtures itself).

    # tests/conftest.py
    from tests.fake_api.fixtures import running_fake_api, fake_api_env

    @pytest.fixture
    def fake_api():
        with running_fake_api() as fake:
            yield fake

    @pytest.fixture
    def api_env(fake_api, monkeypatch):
        for name, value in fake_api_env(fake_api).items():
            monkeypatch.setenv(name, value)
        return fake_api
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Any, Iterator

from .server import FakeAPI


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


def subprocess_env(fake: FakeAPI, api_key: str = "test-key", **extra: str) -> dict[str, str]:
    """A copy of ``os.environ`` for running the CLI in a subprocess against `fake`.

    Any ``ANTHROPIC_AUTH_TOKEN`` is removed so the fake's key is the only credential.
    """
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_AUTH_TOKEN"}
    env.update(fake.env(api_key))
    env.update(extra)
    return env
