"""Token usage and its price: one model for counts, one table for money."""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:  # the SDK takes seconds to import; its types are for the checker only
    from anthropic.types import Usage


class TokenUsage(BaseModel):
    """Tokens billed by the API, as saved in state, logs and reports."""

    model_config = ConfigDict(populate_by_name=True)

    input: int = 0
    output: int = 0
    cache_read: int = Field(0, alias="cacheRead")
    cache_write: int = Field(0, alias="cacheWrite")

    @classmethod
    def from_api(cls, usage: Usage) -> TokenUsage:
        """Read an SDK `Usage`; missing fields are 0 (the SDK builds its objects unchecked, and a
        proxy may leave the cache counts out)."""
        return cls(
            input=getattr(usage, "input_tokens", 0) or 0,
            output=getattr(usage, "output_tokens", 0) or 0,
            cache_read=getattr(usage, "cache_read_input_tokens", 0) or 0,
            cache_write=getattr(usage, "cache_creation_input_tokens", 0) or 0,
        )

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            input=self.input + other.input,
            output=self.output + other.output,
            cache_read=self.cache_read + other.cache_read,
            cache_write=self.cache_write + other.cache_write,
        )

    @property
    def total_input(self) -> int:
        """All prompt tokens, however billed."""
        return self.input + self.cache_read + self.cache_write

    @property
    def total(self) -> int:
        return self.total_input + self.output

    def dump(self) -> dict[str, int]:
        return self.model_dump(by_alias=True)


class ModelPrice(BaseModel):
    """USD per million tokens."""

    input: float = Field(description="USD per million input tokens.")
    output: float = Field(description="USD per million output tokens (thinking included).")
    cache_read: float = Field(description="USD per million tokens read from the prompt cache (0.1x input).")
    cache_write: float = Field(description="USD per million tokens written to the prompt cache (1.25x input).")

    def cost(self, usage: TokenUsage) -> float:
        return (
            usage.input * self.input
            + usage.output * self.output
            + usage.cache_read * self.cache_read
            + usage.cache_write * self.cache_write
        ) / 1_000_000


def _family_price(input_per_mtok: float, output_per_mtok: float) -> ModelPrice:
    # Anthropic's published multipliers: 5-minute cache writes 1.25x input, reads 0.1x.
    return ModelPrice(
        input=input_per_mtok,
        output=output_per_mtok,
        cache_read=round(input_per_mtok * 0.1, 6),
        cache_write=round(input_per_mtok * 1.25, 6),
    )


# Anthropic's list prices per model (platform.claude.com, "Model pricing"), by the model's id
# without its date or provider spelling (`canonical_model`). The books may over-record, never
# under-record: Opus 5.5, Sonnet 5 and 5.5 and the Haiku models keep the price of their family
# before them ($5/$25, $3/$15, $1/$5), at or above their list price (Haiku 5.5's long-prompt band
# included), and cache reads are 0.1x input where a model has a cheaper rate.
MODEL_PRICES: dict[str, ModelPrice] = {
    "claude-mythos-preview": _family_price(25.0, 125.0),
    **dict.fromkeys(("claude-fable-5", "claude-fable-5-1", "claude-fable-5-2", "claude-mythos-5", "claude-mythos-5-1",
                     "claude-mythos-5-2"), _family_price(10.0, 50.0)),
    **dict.fromkeys(("claude-opus-4", "claude-opus-4-0", "claude-opus-4-1", "claude-3-opus"), _family_price(15.0, 75.0)),
    **dict.fromkeys(("claude-opus-4-5", "claude-opus-4-6", "claude-opus-4-7", "claude-opus-4-8", "claude-opus-5",
                     "claude-opus-5-5"), _family_price(5.0, 25.0)),
    **dict.fromkeys(("claude-sonnet-5", "claude-sonnet-5-5", "claude-sonnet-4", "claude-sonnet-4-0", "claude-sonnet-4-5",
                     "claude-sonnet-4-6", "claude-3-7-sonnet", "claude-3-5-sonnet", "claude-3-sonnet"),
                    _family_price(3.0, 15.0)),
    **dict.fromkeys(("claude-haiku-5-5", "claude-haiku-4-5", "claude-3-5-haiku", "claude-3-haiku"), _family_price(1.0, 5.0)),
}
# An unknown model is priced like the dearest one known, so a cost cap errs on the safe side:
# never by a family word in its id (Opus 4.1 and Opus 4.5 are both "opus", at 3x apart).
FALLBACK_PRICE = max(MODEL_PRICES.values(), key=lambda price: (price.output, price.input))
# What a provider adds around an id: Bedrock's `us.anthropic.` and `-v1:0`, Vertex's `@date`,
# the API's `-20250805` and `-latest`, Claude Code's `[1m]`.
_PROVIDER_PREFIX = re.compile(r"^(?:[a-z]{2,4}\.)?anthropic\.")
_SUFFIXES = re.compile(r"(?:\[1m\]|@.*|-v\d+(?::\d+)?|-\d{8}|-latest)+$")


def canonical_model(model: str) -> str:
    """`model` as `MODEL_PRICES` lists it: `us.anthropic.claude-opus-4-1-20250805-v1:0` -> `claude-opus-4-1`."""
    name = _PROVIDER_PREFIX.sub("", model.strip().lower())
    return _SUFFIXES.sub("", name)


class PriceTable:
    """Looks up the price of a model: the user's overrides (exact id, then a word of the id), then
    Anthropic's list price of the model, then the dearest list price."""

    def __init__(self, overrides: dict[str, ModelPrice] | None = None) -> None:
        self._overrides = dict(overrides or {})

    def price_for(self, model: str) -> ModelPrice:
        if model in self._overrides:
            return self._overrides[model]
        for family, price in self._overrides.items():
            if family in model:
                return price
        return MODEL_PRICES.get(canonical_model(model), FALLBACK_PRICE)

    def cost(self, model: str, usage: TokenUsage) -> float:
        return self.price_for(model).cost(usage)


def usd(amount: float) -> str:
    """`amount` in dollars with cents, and as many more digits as a smaller amount needs to
    stay readable: a cap of 0.001 reads `$0.001`, not `$0.00`."""
    if amount == 0 or abs(amount) >= 0.995 or round(amount, 2) == amount:
        return f"${amount:.2f}"
    digits = min(6, max(2, 1 - math.floor(math.log10(abs(amount)))))  # two significant digits
    text = f"{amount:.{digits}f}".rstrip("0")
    return "$" + (text if len(text.split(".")[1]) >= 2 else f"{amount:.2f}")
