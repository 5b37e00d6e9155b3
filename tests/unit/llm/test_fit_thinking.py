"""The books fit a request's thinking budget under a lowered max_tokens, for our requests and
for the JSON Claude Code sends through the metering proxy, without touching what they were given."""

from __future__ import annotations

import json

from orchestrator.json_types import ApiRequest
from orchestrator.llm.attempt_model import ANSWER_HEADROOM, AttemptModel, fit_thinking_budget


def test_a_foreign_request_keeps_every_key_of_its_thinking_when_the_budget_is_lowered() -> None:
    body = '{"model": "claude-sonnet-4-5", "max_tokens": 8000, "thinking": ' \
           '{"type": "enabled", "budget_tokens": 6000, "display": "omitted", "later_key": 1}}'
    request = json.loads(body)
    assert fit_thinking_budget(request, 4000) is None
    assert request["thinking"] == {"type": "enabled", "budget_tokens": 4000 - ANSWER_HEADROOM, "display": "omitted",
                                   "later_key": 1}


def test_a_thinking_setting_without_a_type_or_not_enabled_is_left_as_it_is() -> None:
    for thinking in ({"budget_tokens": 6000}, {"type": "adaptive"}, "enabled"):
        request = {"model": "m", "max_tokens": 8000, "thinking": thinking}
        assert fit_thinking_budget(request, 1500) is None
        assert request["thinking"] == thinking


def test_the_attempts_own_thinking_is_not_lowered_with_one_request() -> None:
    """Every request of an attempt adds the same `request_fields`: a budget lowered for one
    call (a cost cap near) must not stay lowered for the calls after it."""
    attempt = AttemptModel(model="claude-sonnet-4-5", thinking={"type": "enabled", "budget_tokens": 4096})
    fields = attempt.request_fields()
    request: ApiRequest = {"model": "claude-sonnet-4-5", "max_tokens": 3000, "messages": [], **fields}
    assert fit_thinking_budget(request, 3000) is None
    assert request["thinking"] == {"type": "enabled", "budget_tokens": 3000 - ANSWER_HEADROOM}
    assert fields["thinking"] == {"type": "enabled", "budget_tokens": 4096}
