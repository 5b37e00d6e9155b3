"""The price table books each model at its list price, whatever the provider's spelling of its id,
and a model it does not know at the dearest price it knows (issue 40, break 6)."""

from __future__ import annotations

import pytest

from orchestrator.llm.costs.pricing import FALLBACK_PRICE, MODEL_PRICES, PriceTable, TokenUsage, canonical_model

MILLION = TokenUsage(input=1_000_000, output=1_000_000)


@pytest.mark.parametrize("model", [
    "claude-opus-4-1", "claude-opus-4-1-20250805", "claude-opus-4-1@20250805", "us.anthropic.claude-opus-4-1-20250805-v1:0",
    "claude-opus-4-0", "claude-opus-4-20250514", "claude-opus-4@20250514", "anthropic.claude-opus-4-20250514-v1:0",
    "claude-3-opus-20240229", "claude-3-opus-latest", "anthropic.claude-3-opus-20240229-v1:0",
])
def test_opus_4_4_1_and_3_are_booked_at_15_and_75(model: str) -> None:
    price = PriceTable().price_for(model)
    assert (price.input, price.output) == (15.0, 75.0)
    assert PriceTable().cost(model, MILLION) == 90.0


@pytest.mark.parametrize("model", ["claude-opus-4-5", "claude-opus-4-5-20251101", "claude-opus-4-6", "claude-opus-4-7"])
def test_the_later_opus_models_keep_5_and_25(model: str) -> None:
    assert PriceTable().cost(model, MILLION) == 30.0


@pytest.mark.parametrize("model", ["claude-opus-9", "claude-haiku-9", "gpt-5", "claude-opus-4-10", "claude-opus-4-1x", "opus"])
def test_an_unknown_model_is_booked_at_the_dearest_known_price(model: str) -> None:
    assert PriceTable().price_for(model) == FALLBACK_PRICE
    for price in MODEL_PRICES.values():
        assert FALLBACK_PRICE.input >= price.input and FALLBACK_PRICE.output >= price.output
        assert FALLBACK_PRICE.cache_write >= price.cache_write and FALLBACK_PRICE.cache_read >= price.cache_read


def test_no_listed_model_is_booked_under_its_family_of_old() -> None:
    """Each id the table lists is its own: no lookup by a word of the id can put Opus 4.1 at Opus 4.5's price."""
    assert canonical_model("us.anthropic.claude-opus-4-1-20250805-v1:0") == "claude-opus-4-1"
    assert canonical_model("claude-sonnet-4-5@20250929") == "claude-sonnet-4-5"
    assert canonical_model("claude-opus-4-6[1m]") == "claude-opus-4-6"
    for model in MODEL_PRICES:
        assert canonical_model(model) == model
