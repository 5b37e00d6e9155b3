"""Which model makes an attempt's calls, and how it thinks: `--escalate-model`, `--thinking`.

An attempt's settings are chosen when it starts and kept for all its calls: the model and its
thinking are part of the conversation (thinking blocks are signed by the model that wrote
them), so they never change in the middle of one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

from orchestrator.json_types import BookedRequest, ThinkingFields
from orchestrator.llm.models import INTERLEAVED_THINKING_BETA, MIN_THINKING_BUDGET, thinking_support

if TYPE_CHECKING:  # the SDK takes seconds to import; its types are for the checker only
    from anthropic.types import ThinkingConfigParam

# `--thinking auto` on a model that only takes a budget: this share of max_tokens, on retries.
AUTO_BUDGET_SHARE = 2
# Output tokens kept for the answer when a lowered max_tokens squeezes the thinking budget.
ANSWER_HEADROOM = 1024


class ModelChoice(Protocol):
    """The settings that choose an attempt's model and thinking (`orchestrator.config.RunConfig` has them)."""

    @property
    def model(self) -> str: ...
    @property
    def escalate_model(self) -> str | None: ...
    @property
    def escalate_on(self) -> Literal["failure", "last"]: ...
    @property
    def thinking(self) -> str: ...
    @property
    def max_output_tokens(self) -> int: ...


@dataclass(frozen=True)
class AttemptModel:
    """The model of one attempt and what its requests add for thinking."""

    model: str
    escalated: bool = False
    thinking: ThinkingConfigParam | None = None  # the request's `thinking`, None when off
    extra_headers: dict[str, str] = field(default_factory=dict)  # the interleaved-thinking beta

    def request_fields(self) -> ThinkingFields:
        """What an agent request adds to model, max_tokens, system, tools and messages."""
        fields: ThinkingFields = {}
        if self.thinking is not None:
            fields["thinking"] = self.thinking.copy()
        if self.extra_headers:
            fields["extra_headers"] = dict(self.extra_headers)
        return fields


def escalates(config: ModelChoice, attempt: int, max_attempts: int) -> bool:
    """True when `attempt` goes to the escalation model: any attempt after a failed one
    (`escalate_on = "failure"`), or only the last one when it is not also the first (`"last"`)."""
    if config.escalate_model is None or attempt <= 1:
        return False
    return config.escalate_on == "failure" or attempt >= max_attempts


def attempt_model(config: ModelChoice, attempt: int, max_attempts: int) -> AttemptModel:
    """The model and thinking of `attempt` (1-based) of a feature with `max_attempts`."""
    escalated = escalates(config, attempt, max_attempts)
    model = config.escalate_model if escalated and config.escalate_model else config.model
    thinking = thinking_request(model, config.thinking, config.max_output_tokens, retry=attempt > 1)
    headers: dict[str, str] = {}
    if thinking is not None and thinking.get("type") == "enabled" and thinking_support(model).interleaved_beta:
        # Thinking between tool calls, where the model takes it: the agent reasons over each result.
        headers["anthropic-beta"] = INTERLEAVED_THINKING_BETA
    return AttemptModel(model=model, escalated=escalated, thinking=thinking, extra_headers=headers)


def thinking_request(model: str, setting: str, max_tokens: int, *, retry: bool) -> ThinkingConfigParam | None:
    """The request's `thinking` for `setting` ("off", "auto" or a budget), or None for none.

    "auto": adaptive thinking where the model takes it (the model decides when thinking
    helps); on a model that only takes a budget, thinking on retries only, with half of
    max_tokens. A budget on a model where budgets are deprecated (4.6) is sent as adaptive
    thinking. The config has already refused a setting the model cannot take.
    """
    if setting == "off":
        return None
    support = thinking_support(model)
    if setting == "auto" or support.prefers_adaptive:
        if support.adaptive:
            return {"type": "adaptive"}
        budget = max_tokens // AUTO_BUDGET_SHARE
        if not (retry and support.budget and budget >= MIN_THINKING_BUDGET):
            return None
        return {"type": "enabled", "budget_tokens": budget}
    return {"type": "enabled", "budget_tokens": int(setting)}


def fit_thinking_budget(request: BookedRequest, max_tokens: int) -> str | None:
    """Keep a request's thinking budget below its (possibly lowered) max_tokens, in place,
    leaving at least `ANSWER_HEADROOM` tokens for the answer itself.

    When max_tokens is too small for the minimum budget plus that headroom (a cost cap near),
    thinking is dropped for this call; returns the notice that says so, or None.
    """
    thinking = request.get("thinking")
    # Indexed, not `.get`: the checker narrows the SDK's thinking types on `type` only so.
    if not isinstance(thinking, dict) or "type" not in thinking or thinking["type"] != "enabled":
        return None
    budget = int(thinking.get("budget_tokens", 0))
    room = max_tokens - ANSWER_HEADROOM
    if budget <= room:
        return None
    if room < MIN_THINKING_BUDGET:
        del request["thinking"]
        request.pop("extra_headers", None)  # the interleaved-thinking beta goes with it
        return (f"thinking left out of this call: only {max_tokens} output tokens are affordable, too few for the "
                f"minimum thinking budget ({MIN_THINKING_BUDGET}) and {ANSWER_HEADROOM} for the answer")
    request["thinking"] = {**thinking, "budget_tokens": room}
    return None
