"""Token usage and its price: one model for counts, one table for money."""

from __future__ import annotations

import math
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


# Prices by model family; a model is priced by the first family its id contains. Users
# override or extend this in orchestrate.toml ([pricing."model-id"] input = ...).
DEFAULT_FAMILY_PRICES: dict[str, ModelPrice] = {
    "opus": _family_price(5.0, 25.0),
    "sonnet": _family_price(3.0, 15.0),
    "haiku": _family_price(1.0, 5.0),
}
# An unknown model is priced like the dearest family, so a cost cap errs on the safe side.
FALLBACK_PRICE = _family_price(5.0, 25.0)


class PriceTable:
    """Looks up the price of a model: exact overrides first, then family, then fallback."""

    def __init__(self, overrides: dict[str, ModelPrice] | None = None) -> None:
        self._overrides = dict(overrides or {})

    def price_for(self, model: str) -> ModelPrice:
        if model in self._overrides:
            return self._overrides[model]
        for family, price in self._overrides.items():
            if family in model:
                return price
        for family, price in DEFAULT_FAMILY_PRICES.items():
            if family in model:
                return price
        return FALLBACK_PRICE

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
