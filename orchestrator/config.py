"""Run configuration: every setting of a run, one field each, checked together (`RunConfig`).

Each field's description is its documentation. Where a value comes from (flags, then
ORCHESTRATE_* environment, then orchestrate.toml, then defaults) is `config_layers`.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from orchestrator.agent_settings import AgentSettings
from orchestrator.llm.client_settings import ClientSettings, Provider
from orchestrator.llm.costs.pricing import ModelPrice, PriceTable
from orchestrator.llm.models import MIN_THINKING_BUDGET, default_agent_model, default_summarizer_model, thinking_problem
from orchestrator.regression_budget import DEFAULT_REGRESSION_BUDGET, BudgetSetting
from orchestrator.safety.bubblewrap.net_proxy import checked_hosts
from orchestrator.user_errors import UsageError

ContextStrategy = Literal["compressed", "replay", "window"]
SandboxMode = Literal["auto", "bwrap", "none"]

# Settings as one layer gives them, before RunConfig checks them: free-form by nature (any
# key a user may misspell, any value a TOML file or a flag may hold).
Settings = dict[str, object]


class ConfigError(UsageError):
    """Bad configuration, or no API key: the CLI prints it and exits 2."""


class SecurityConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    deny: list[str] = Field(default_factory=list, description="Extra shell deny-list regexes.")
    secret_env_patterns: list[str] = Field(
        default_factory=list, description="Extra environment-variable name patterns kept from the agent."
    )


class SandboxOptions(BaseModel):
    """The `[sandbox]` table of orchestrate.toml (its `mode` becomes the `sandbox` setting)."""

    model_config = ConfigDict(extra="forbid")

    read: list[str] = Field(default_factory=list, description="Paths commands may read (hidden ones: under home, /tmp).")
    write: list[str] = Field(default_factory=list, description="Paths outside the project commands may write.")
    network: bool = Field(False, description="Let commands and checks reach the network, every host.")
    allow_hosts: list[str] = Field(default_factory=list, description="Hosts reachable through the sandbox's proxy.")

    @field_validator("allow_hosts")
    @classmethod
    def _plain_host_names(cls, hosts: list[str]) -> list[str]:
        return checked_hosts(hosts)


class RunConfig(AgentSettings):
    """Everything a run needs besides the spec."""

    # No inf or nan in any number: `--max-cost inf` is no cap at all, and arithmetic on it
    # (tokens affordable, seconds to wait) overflows in the middle of a run.
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    context: ContextStrategy = Field("compressed", description="How history reaches the prompt.")
    context_depth: int = Field(5, ge=1, description="Features shown by the window strategy.")
    model: str = Field(default_factory=default_agent_model, description="Model for the coding agent.")
    summarizer_model: str = Field(
        default_factory=default_summarizer_model, description="Model for the Context Agent's summarizer."
    )
    impact_model: str | None = Field(
        None, description="Model for the Impact Agent's footprint prediction (off by default: deterministic only)."
    )
    max_attempts: int | None = Field(None, ge=1, description="Override every feature's attempt limit.")
    summarize_every: int = Field(5, ge=1, description="Summarize after this many completed features.")
    max_turns: int = Field(40, ge=1, description="Model calls per attempt.")
    max_cost: float | None = Field(None, gt=0, description="USD cap for the whole run (checked before each call).")
    max_feature_tokens: int = Field(
        3_000_000, ge=1000, description="Token cap per feature, all attempts (checked before each call)."
    )
    max_output_tokens: int = Field(8192, ge=256, description="max_tokens of each agent call.")
    check_timeout: float = Field(600.0, gt=0, description="Seconds a verify command may run.")
    bash_timeout: float = Field(120.0, gt=0, description="Seconds one agent bash command may run.")
    mask_after_tokens: int = Field(
        30_000, ge=1000, description="Tool outputs older than this many tokens are masked with a placeholder."
    )
    api_timeout: float = Field(600.0, gt=0, description="Seconds one HTTP request to the API may take.")
    api_max_retries: int = Field(2, ge=0, description="The SDK's own retries per request.")
    retry_attempts: int = Field(4, ge=1, description="Outer tenacity attempts around one model call.")
    retry_max_wait: float = Field(30.0, ge=0, description="Longest back-off between outer attempts (s).")
    retry_deadline: float = Field(600.0, gt=0, description="Give up on one model call after this long (s).")
    commit: bool = Field(True, description="Commit a checkpoint per passed feature in a git project.")
    strict_checks: bool = Field(
        False, description="Fail an attempt that changed files able to sway its check (conftest.py, pytest config, ...)."
    )
    branch: str | None = Field(
        None, description="Checkpoints go to this git branch (a worktree of it); the checked-out branch is left alone."
    )
    jobs: int = Field(
        1, ge=1, le=64, description="Features run at once, each in its own git worktree, merged one at a time."
    )
    regression: Literal["affected", "all", "none"] = Field(
        "affected", description="Re-run passed features' checks after each feature: those it may affect, all, or none."
    )
    regression_budget: BudgetSetting = Field(
        DEFAULT_REGRESSION_BUDGET, description="Time for the guard's checks after a feature: 3x its own check, or 20s."
    )
    final_verify: bool = Field(True, description="Re-run every passed feature's check on the final tree.")
    check_concurrency: int | None = Field(
        None, ge=1, description="Re-run checks at once (default: the CPU count; 1 when checks share a port or file)."
    )
    escalate_model: str | None = Field(
        None, description="Stronger model for the attempt after a failed one (or the last, see escalate_on)."
    )
    escalate_on: Literal["failure", "last"] = Field(
        "failure", description="When escalate_model takes over: every attempt after a failed one, or only the last."
    )
    thinking: str = Field(
        "off", description="Extended thinking: off, auto (when the model decides, or on retries), or a token budget."
    )
    provider: Provider = Field("anthropic", description="Where the model runs: anthropic, bedrock or vertex.")
    html: Path | None = Field(None, description="Write the HTML run report here after the run.")
    pricing: dict[str, ModelPrice] = Field(
        default_factory=dict, description="USD per million tokens, by model id or family substring."
    )
    security: SecurityConfig = Field(default_factory=SecurityConfig)
    sandbox: SandboxMode = Field(
        "auto", description="Where the agent's commands and the checks run: bwrap, none, or auto (bwrap when it works)."
    )
    sandbox_options: SandboxOptions = Field(default_factory=SandboxOptions)

    @field_validator("model", "summarizer_model")
    @classmethod
    def _non_empty(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value.strip()

    @field_validator("escalate_model")
    @classmethod
    def _non_empty_or_unset(cls, value: str | None) -> str | None:
        return value.strip() or None if value is not None else None

    @field_validator("thinking", mode="before")
    @classmethod
    def _thinking_setting(cls, value: object) -> str:
        text = str(value).strip().lower() if not isinstance(value, bool) else ""
        if text in ("off", "auto"):
            return text
        if not text.isdigit():
            raise ValueError(f"{value!r}: give off, auto or a budget of thinking tokens such as 4096")
        if int(text) < MIN_THINKING_BUDGET:
            raise ValueError(f"{text}: a thinking budget must be at least {MIN_THINKING_BUDGET} tokens (the API's floor)")
        return str(int(text))

    @model_validator(mode="after")
    def _thinking_fits(self) -> RunConfig:
        """A thinking setting the models or max_tokens cannot take stops the run before any call."""
        if self.thinking.isdigit() and int(self.thinking) >= self.max_output_tokens:
            raise ValueError(
                f"thinking: a budget of {self.thinking} tokens must be below max_output_tokens "
                f"({self.max_output_tokens}); lower it or raise max_output_tokens"
            )
        if self.thinking != "off":
            for model in filter(None, (self.model, self.escalate_model)):
                problem = thinking_problem(model, self.thinking)
                if problem:
                    raise ValueError(f"thinking: {problem}")
        return self

    @field_validator("pricing")
    @classmethod
    def _finite_prices(cls, pricing: dict[str, ModelPrice]) -> dict[str, ModelPrice]:
        # ModelPrice itself accepts any float; a cost cap computed from inf or a negative price is no cap.
        for model, price in pricing.items():
            for kind, value in price.model_dump().items():
                if not math.isfinite(value) or value < 0:
                    raise ValueError(f"{model}.{kind} = {value}: a price must be a finite number >= 0")
                if value == 0 and kind in ("input", "output"):  # the cost cap divides by them
                    raise ValueError(f"{model}.{kind} = 0: input and output prices must be above 0; for a model "
                                     "that costs nothing, give a tiny price such as 0.0001")
        return pricing

    def price_table(self) -> PriceTable:
        return PriceTable(self.pricing)

    def client_settings(self) -> ClientSettings:
        """What the model client reads of this configuration (`llm` does not import this module)."""
        return ClientSettings(
            model=self.model, summarizer_model=self.summarizer_model, escalate_model=self.escalate_model,
            provider=self.provider, max_output_tokens=self.max_output_tokens, max_cost=self.max_cost,
            max_feature_tokens=self.max_feature_tokens, api_timeout=self.api_timeout,
            api_max_retries=self.api_max_retries, retry_attempts=self.retry_attempts,
            retry_max_wait=self.retry_max_wait, retry_deadline=self.retry_deadline, jobs=self.jobs,
            prices=self.price_table())
