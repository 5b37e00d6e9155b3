"""The fake Messages API behaves like the real one, as the real `anthropic` SDK sees it.

Every test talks to the fake over HTTP with the SDK (or, where the SDK would refuse to send
a broken request, with urllib), so what passes here is what the orchestrator will meet.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fake_messages_api.billing.caching import ManualClock, PromptCache
from fake_messages_api.billing.prompt import PromptBlock
from fake_messages_api.faults import RandomFaults
from fake_messages_api.scripted_agent.summarizer import minimal_instance
from fake_messages_api.server import FakeAPI
from tests.fake_api_fixtures import running_fake_api


@pytest.fixture
def fake() -> Iterator[FakeAPI]:
    with running_fake_api() as server:
        yield server


# -- the scripted agent ---------------------------------------------------------------------


# -- the summarizer -------------------------------------------------------------------------


def test_minimal_instance_follows_the_schema() -> None:
    schema = {
        "type": "object",
        "properties": {
            "kind": {"enum": ["a", "b"]},
            "tags": {"type": "array", "items": {"type": "string", "minLength": 2}, "minItems": 1},
            "n": {"type": "integer", "minimum": 3},
            "ok": {"type": ["boolean", "null"]},
        },
    }
    assert minimal_instance(schema) == {"kind": "a", "tags": ["xx"], "n": 3, "ok": False}


# -- usage and prompt caching ---------------------------------------------------------------


def blocks(*tokens: int, breakpoints: tuple[int, ...] = (), ttl: str = "5m", tag: str = "") -> list[PromptBlock]:
    return [PromptBlock("messages", f"{tag}{i}", n, ttl if i in breakpoints else None) for i, n in enumerate(tokens)]


def test_cache_entries_expire_after_their_ttl_and_reads_refresh_them() -> None:
    clock = ManualClock()
    cache = PromptCache(clock=clock, min_cacheable_tokens=100)
    prompt = blocks(200, 50, breakpoints=(0,))
    assert cache.apply("m", prompt).cache_creation_input_tokens == 200
    clock.advance(299)
    assert cache.apply("m", prompt).cache_read_input_tokens == 200  # and refreshed
    clock.advance(299)
    assert cache.apply("m", prompt).cache_read_input_tokens == 200
    clock.advance(301)
    expired = cache.apply("m", prompt)
    assert (expired.cache_read_input_tokens, expired.cache_creation_input_tokens) == (0, 200)

    long_lived = blocks(200, breakpoints=(0,), ttl="1h", tag="h")
    assert cache.apply("m", long_lived).ephemeral_1h_input_tokens == 200
    clock.advance(3000)
    assert cache.apply("m", long_lived).cache_read_input_tokens == 200


def test_cache_minimum_model_identity_and_lookback() -> None:
    cache = PromptCache(clock=ManualClock(), min_cacheable_tokens=1024)
    short = cache.apply("m", blocks(500, 10, breakpoints=(1,)))
    assert (short.cache_creation_input_tokens, short.input_tokens) == (0, 510)  # below the minimum

    prompt = blocks(1100, 10, breakpoints=(0,))
    cache.apply("m", prompt)
    assert cache.apply("other-model", prompt).cache_read_input_tokens == 0
    assert cache.apply("m", blocks(1100, 10, breakpoints=(0,), tag="changed")).cache_read_input_tokens == 0

    # A breakpoint finds the entry up to 20 blocks back, not 21.
    base = [1100] + [5] * 25
    cache.apply("m", blocks(*base, breakpoints=(0,), tag="lb"))
    assert cache.apply("m", blocks(*base, breakpoints=(20,), tag="lb")).cache_read_input_tokens == 1100
    cache2 = PromptCache(clock=ManualClock(), min_cacheable_tokens=1024)
    cache2.apply("m", blocks(*base, breakpoints=(0,), tag="lb"))
    assert cache2.apply("m", blocks(*base, breakpoints=(21,), tag="lb")).cache_read_input_tokens == 0


# -- faults ---------------------------------------------------------------------------------


def test_random_faults_are_reproducible_and_near_their_rate() -> None:
    def run() -> list[int | None]:
        policy = RandomFaults(rate=0.2, kinds=(429, 529, 500), seed=7)
        return [f.status if (f := policy(i, None)) else None for i in range(500)]

    first = run()
    assert first == run()
    share = sum(1 for s in first if s is not None) / len(first)
    assert 0.14 < share < 0.26
    assert {s for s in first if s is not None} == {429, 529, 500}


# -- authentication, validation, routing ----------------------------------------------------


# -- the server itself ----------------------------------------------------------------------


