"""Honest token estimates: caps count what the API adds for tools, and `context --count` asks
the API's count_tokens for the exact figure."""

from __future__ import annotations

from orchestrator.llm.conversation import AttemptRequestTokens, cached_system, with_cached_tools
from orchestrator.llm.request_tokens import request_tokens
from orchestrator.llm.tool_overhead import tool_overhead_tokens
from orchestrator.tools.registry import tool_definitions
from shared_base.tokens import estimate_json_tokens


def test_the_caps_estimate_counts_what_the_api_adds_for_the_tools() -> None:
    tools = with_cached_tools(tool_definitions())
    system = cached_system("You build features.")
    messages = [{"role": "user", "content": [{"type": "text", "text": "## Feature\nID: feat-01\n"}]}]
    request = {"system": system, "tools": tools, "messages": messages}
    bare = estimate_json_tokens({"system": system, "tools": tools, "messages": messages, "output_config": None})
    # The tool-use system prompt (346), bash (245) and the text editor (700).
    assert tool_overhead_tokens(tools) == 346 + 245 + 700
    assert request_tokens(request) == bare + tool_overhead_tokens(tools)
    assert tool_overhead_tokens(tools, {"type": "any"}) == 313 + 245 + 700
    assert tool_overhead_tokens([]) == 0
    # The size the agent loop keeps is the same figure, message by message.
    assert AttemptRequestTokens(system, tools).tokens(messages) == request_tokens(
        {**request, "messages": [{**messages[0], "content": [{**messages[0]["content"][0], "cache_control": {"type": "ephemeral"}}]}]}
    )
