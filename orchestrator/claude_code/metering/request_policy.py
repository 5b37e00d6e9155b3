"""What the metering proxy passes on: the calls Claude Code makes for the run, and nothing else.

The proxy holds the run's real key, so whatever reaches it with the attempt's dummy key is paid
for by the user. Its caller should be the attempt's CLI alone (the agent's commands get neither
the key nor a route: `launch`, `sign_in.shell_prefix`), but the proxy does not count on it: a
request is passed on only when it is one the run configured, checked field by field against
what the bundled CLI sends (an allowlist: anything not named is refused):

- the model is the run's (the attempt's `--model`; the CLI's aliases are pinned to it, so its
  small-model and subagent calls ask for it too): another model bills at another price;
- no server tool (`web_search`, `web_fetch`, `code_execution`, ...: they reach any URL from
  Anthropic's side, past `allow_hosts`, and bill outside the token counts) and no `mcp_servers`;
- no option that changes the price or the reach: `speed`, `service_tier`, `container`, a cache
  time to live other than the 5 minutes the books price, a beta not in `ALLOWED_BETAS` (the 1M
  context, fast mode, the 1-hour cache, the Files API, batches ...).

A refused request gets the API's own 400 `invalid_request_error`, saying why; nothing is sent.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from orchestrator.json_types import ForeignRequest, JsonObject

# The top-level fields of a Messages (or count_tokens) request that the CLI sends and that cost
# only what the books count.
ALLOWED_FIELDS = frozenset({
    "model", "messages", "system", "max_tokens", "metadata", "stop_sequences", "stream", "temperature", "top_k",
    "top_p", "thinking", "tools", "tool_choice", "context_management", "output_config",
})
# Betas the bundled CLI sends that change neither the price nor where a call reaches.
ALLOWED_BETAS = frozenset({
    "claude-code-20250219", "interleaved-thinking-2025-05-14", "context-management-2025-06-27",
    "per-turn-control-2026-07-01", "mid-conversation-tool-changes-2026-07-01", "thinking-token-count-2026-05-13",
    "effort-2025-11-24", "thinking-display-updates-2026-08-18", "token-counting-2024-11-01",
    "redact-thinking-2026-02-12", "prompt-caching-scope-2026-01-05", "structured-outputs-2025-12-15",
    "mid-conversation-system-2026-04-07", "mid-conversation-system-clear-at-2026-08-21",
    "thinking-resumption-2026-07-17", "thinking-binding-controls-2026-08-01", "context-hint-2026-04-09",
    "tool-provenance-2026-10-26", "request-tags-2026-08-21", "fine-grained-tool-streaming-2025-05-14",
    "token-efficient-tools-2025-02-19",
})
CACHE_TTLS = (None, "5m")  # what the price table's cache-write price is for
_OUTPUT_OPTIONS = frozenset({"effort", "format"})


def body_refusal(body: bytes, betas: str | None, models: frozenset[str]) -> str | None:
    """`refusal` of a request's raw body: one that is not a JSON object is refused too."""
    try:
        request = json.loads(body)
    except ValueError:
        request = None
    if not isinstance(request, dict):
        return "the body is not a Messages API request"
    return refusal(request, betas, models)


def refusal(request: ForeignRequest, betas: str | None, models: frozenset[str]) -> str | None:
    """Why the proxy must not pass `request` (with its `anthropic-beta` header) on; None when it may."""
    model = request.get("model")
    if model not in models:
        return f"the model {model!r} is not this run's ({', '.join(sorted(models))})"
    unknown = sorted(set(request) - ALLOWED_FIELDS)
    if unknown:
        return f"the request sets {', '.join(unknown)}, which this run did not configure"
    beta = next((name for name in _names(betas) if name not in ALLOWED_BETAS), None)
    if beta is not None:
        return f"the beta {beta!r} is not one this run uses"
    tools = request.get("tools") or []
    for tool in tools if isinstance(tools, list) else [tools]:
        if not isinstance(tool, dict) or tool.get("type", "custom") != "custom":
            name = tool.get("name") or tool.get("type") if isinstance(tool, dict) else tool
            return f"the tool {name!r} runs on Anthropic's side, which this run does not allow"
    output = request.get("output_config") or {}
    if not isinstance(output, dict) or set(output) - _OUTPUT_OPTIONS:
        return "the request's output_config asks for more than an effort or a format"
    for cache in _cache_controls(request):
        if not isinstance(cache, dict) or cache.get("ttl") not in CACHE_TTLS:
            return "a cache time to live other than 5 minutes is not one this run uses"
    return None


def _names(header: str | None) -> list[str]:
    return [name.strip() for name in (header or "").split(",") if name.strip()]


def _cache_controls(request: ForeignRequest) -> Iterator[object]:
    """Every `cache_control` where the API reads one: system blocks, message blocks (and the
    blocks of a tool result), tools. A tool's input is the model's, and is not looked into."""
    messages = request.get("messages")
    blocks = [*_listed(request.get("system")), *_listed(request.get("tools"))]
    for message in messages if isinstance(messages, list) else []:
        content = message.get("content") if isinstance(message, dict) else None
        for block in _listed(content):
            blocks.append(block)
            blocks += _listed(block.get("content")) if block.get("type") == "tool_result" else []
    for block in blocks:
        if "cache_control" in block:
            yield block["cache_control"]


def _listed(value: object) -> list[JsonObject]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []
