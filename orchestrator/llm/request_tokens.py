"""How big a Messages API request is, in estimated input tokens: what a cap's worst case starts from."""

from __future__ import annotations

from orchestrator.json_types import BookedRequest
from orchestrator.llm.tool_overhead import tool_overhead_tokens
from shared_base.tokens import estimate_json_tokens


def request_tokens(request: BookedRequest) -> int:
    """Estimated input tokens of a whole request, measured from scratch, with what the API adds for its tools."""
    measured = estimate_json_tokens({k: request.get(k) for k in ("system", "tools", "messages", "output_config")})
    return measured + tool_overhead_tokens(request.get("tools"), request.get("tool_choice"))
