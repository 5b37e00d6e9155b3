"""What the model client reads of a run's configuration, and nothing else.

`llm` sits below the run configuration: `orchestrator.config.RunConfig.client_settings()` builds
this object, and the client, the SDK client and the choice of an attempt's model read only it.
A test or a benchmark builds one directly, with the values it cares about.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from orchestrator.llm.costs.pricing import PriceTable

Provider = Literal["anthropic", "bedrock", "vertex"]
# The model settings by the name a user gives them (`model` is `--model`), as the SDK client
# checks that each has an id on the provider.
ModelSettingName = Literal["model", "escalate_model", "summarizer_model"]
ALL_MODEL_SETTINGS: tuple[ModelSettingName, ...] = ("model", "escalate_model", "summarizer_model")


@dataclass(frozen=True)
class ClientSettings:
    """The limits, retries and provider of every model call of one command."""

    model: str
    summarizer_model: str
    escalate_model: str | None
    provider: Provider
    max_output_tokens: int  # a call's max_tokens when its request names none
    max_cost: float | None  # USD for the whole run, checked before each call
    max_feature_tokens: int  # tokens per feature, all attempts
    api_timeout: float  # seconds one HTTP request may take
    api_max_retries: int  # the SDK's own retries per request
    retry_attempts: int  # outer attempts around one call
    retry_max_wait: float  # longest back-off between outer attempts (s)
    retry_deadline: float  # give up on one call after this long (s)
    jobs: int  # features at once: a Claude plan's attempt gets this share of what the cost cap leaves
    prices: PriceTable

    def model_setting(self, name: ModelSettingName) -> str | None:
        """The model id of the setting `name`, or None when it is unset."""
        return {"model": self.model, "summarizer_model": self.summarizer_model,
                "escalate_model": self.escalate_model}[name]
