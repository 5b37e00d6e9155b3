"""What the metering proxy passes on: the calls the run configured, nothing else (`request_policy`)."""

from __future__ import annotations

from typing import Any

import pytest

from orchestrator.claude_code.metering.request_policy import body_refusal, refusal

MODELS = frozenset({"claude-sonnet-5-5"})
CLI_BETAS = ("claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27,"
             "per-turn-control-2026-07-01,mid-conversation-tool-changes-2026-07-01,thinking-token-count-2026-05-13,"
             "effort-2025-11-24,thinking-display-updates-2026-08-18")


def _cli_request(**changes: Any) -> dict[str, Any]:
    """A request as the bundled CLI sends it (its fields, as read from the fake's log)."""
    request = {
        "model": "claude-sonnet-5-5", "max_tokens": 8192, "stream": True, "metadata": {"user_id": "x"},
        "system": [{"type": "text", "text": "You are Claude Code", "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]},
                     {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Bash",
                                                        "input": {"cache_control": {"ttl": "1h"}}}]},
                     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]}],
        "tools": [{"name": "Bash", "description": "run", "input_schema": {"type": "object"}}],
        "thinking": {"type": "adaptive", "display": "updates"}, "output_config": {"effort": "medium"},
        "context_management": {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]},
    }
    request.update(changes)
    return request


def test_the_clis_own_calls_pass() -> None:
    assert refusal(_cli_request(), CLI_BETAS, MODELS) is None  # a tool's input is the model's: not looked into


@pytest.mark.parametrize(("changes", "betas", "said"), [
    ({"model": "claude-opus-4-1"}, "", "not this run's"),
    ({"speed": "fast"}, "", "speed"),
    ({"mcp_servers": [{"type": "url", "url": "https://x", "name": "x"}]}, "", "mcp_servers"),
    ({"service_tier": "priority"}, "", "service_tier"),
    ({"tools": [{"type": "web_search_20250305", "name": "web_search"}]}, "", "web_search"),
    ({"tools": [{"type": "web_fetch_20250910", "name": "web_fetch"}]}, "", "web_fetch"),
    ({"tools": [{"type": "code_execution_20250825", "name": "code_execution"}]}, "", "code_execution"),
    ({"system": [{"type": "text", "text": "x", "cache_control": {"type": "ephemeral", "ttl": "1h"}}]}, "", "5 minutes"),
    ({"output_config": {"effort": "high", "task_budget": 1}}, "", "output_config"),
    ({}, CLI_BETAS + ",context-1m-2025-08-07", "context-1m"),
    ({}, "fast-mode-2026-02-01", "fast-mode"),
    ({}, "extended-cache-ttl-2025-04-11", "extended-cache-ttl"),
])
def test_a_call_the_run_did_not_configure_is_refused(changes: dict[str, Any], betas: str, said: str) -> None:
    why = refusal(_cli_request(**changes), betas, MODELS)
    assert why is not None and said in why


def test_a_body_that_is_no_request_is_refused() -> None:
    assert body_refusal(b"[1, 2]", None, MODELS) == "the body is not a Messages API request"
    assert body_refusal(b"{", None, MODELS) == "the body is not a Messages API request"
