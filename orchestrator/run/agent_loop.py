"""The agent loop of one attempt: call the model, run the tools it asks for, until it reports.

The loop ends when the agent calls `report_feature`, ends its turn without a tool call, or
uses up its turns. A tool that fails answers with `is_error: true` and the loop goes on;
nothing the agent sends can raise out of here except the model client's own exceptions
(limits, an unreachable API) and an interrupt.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from orchestrator.json_types import ApiBlock, ApiMessage, JsonObject, ToolDefinition
from orchestrator.llm.client import CallResult, ModelClient, ModelRequestRejected
from orchestrator.llm.conversation import (
    RequestSize,
    cached_system,
    for_api,
    mask_old_observations,
    with_cached_tools,
    with_conversation_breakpoint,
)
from orchestrator.llm.pricing import TokenUsage
from orchestrator.tools import ToolContext, ToolResult, execute_tool, summarize_input, tool_definitions
from orchestrator.tools.report import TOOL_NAME as REPORT_TOOL
from orchestrator.tools.report import FeatureReport, parse_report

MAX_TOOL_LINES = 200


@dataclass
class AttemptOutcome:
    """How one attempt's agent loop ended."""

    stop: str  # "reported" | "end_turn" | "max_turns" | "max_tokens" | "rejected"
    report: FeatureReport | None = None
    final_text: str = ""
    turns: int = 0
    tool_calls: int = 0
    masked: int = 0
    error: str | None = None
    model: str | None = None  # the model that made the attempt's calls
    usage: TokenUsage = field(default_factory=TokenUsage)  # the attempt's calls, summed
    cost_usd: float = 0.0
    tool_lines: list[str] = field(default_factory=list)  # `tool: what it did`, one a call (`logs ID`)

    def add_tool_line(self, tool: str, summary: str, is_error: bool) -> None:
        if len(self.tool_lines) < MAX_TOOL_LINES:  # a log stays a few kilobytes however long the attempt
            self.tool_lines.append(f"{tool}: {summary}" + (" (error)" if is_error else ""))


@dataclass
class AgentSession:
    """Everything the loop needs that does not change between turns."""

    client: ModelClient
    model: str
    system: str
    tool_context: ToolContext
    max_turns: int
    max_output_tokens: int
    mask_after_tokens: int
    on_event: Callable[..., Any] = lambda *_a, **_k: None
    tools: list[ToolDefinition] = field(default_factory=tool_definitions)
    # Added to every request of the attempt: `thinking` and its beta header (`AttemptModel.request_fields`).
    request_fields: JsonObject = field(default_factory=dict)


def _block_dict(block: Any) -> ApiBlock:
    """An SDK content block as the plain dict we send back.

    Thinking blocks (`thinking` with its `signature`, `redacted_thinking` with its `data`) go
    back exactly as they came: the API checks the signature, and a tool-use turn of a thinking
    model must start with its thinking. They stay in this attempt's messages only: the
    attempt's outcome keeps text, never thinking, so nothing of it reaches another feature.
    """
    kind = getattr(block, "type", None)
    if kind == "text":
        return {"type": "text", "text": block.text}
    if kind == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    if hasattr(block, "model_dump"):
        dumped: ApiBlock = block.model_dump(exclude_none=True)
        return dumped
    return dict(block)


def run_agent(session: AgentSession, history: list[ApiMessage], prompt: str, feature_id: str) -> AttemptOutcome:
    """Run the agent on `prompt` (after `history` messages, if any) until it stops."""
    messages: list[ApiMessage] = [*history, {"role": "user", "content": [{"type": "text", "text": prompt}]}]
    tool_names: dict[str, str] = {}
    system = cached_system(session.system)
    tools = with_cached_tools(session.tools)
    outcome = AttemptOutcome(stop="max_turns", model=session.model)
    size = RequestSize(system, tools)
    for turn in range(1, session.max_turns + 1):
        rewritten: set[int] = set()
        outcome.masked += mask_old_observations(messages, session.mask_after_tokens, tool_names, rewritten)
        request = {
            "model": session.model,
            "max_tokens": session.max_output_tokens,
            "system": system,
            "tools": tools,
            "messages": with_conversation_breakpoint(for_api(messages)),
            **session.request_fields,
        }
        try:
            result = session.client.create(purpose="agent", input_tokens=size.tokens(messages, rewritten), **request)
        except ModelRequestRejected as err:
            outcome.stop, outcome.error = "rejected", str(err)
            return outcome
        outcome.turns = turn
        outcome.usage, outcome.cost_usd = outcome.usage + result.usage, outcome.cost_usd + result.cost_usd
        message = result.message
        _call_event(session, feature_id, turn, result)
        blocks = [_block_dict(block) for block in message.content]
        if not blocks:
            blocks = [{"type": "text", "text": "(no content)"}]
        messages.append({"role": "assistant", "content": blocks})
        text = "\n".join(b["text"] for b in blocks if b.get("type") == "text" and b.get("text"))
        if text:
            outcome.final_text = text
        tool_uses = [b for b in blocks if b.get("type") == "tool_use"]
        if not tool_uses:
            outcome.stop = "max_tokens" if getattr(message, "stop_reason", None) == "max_tokens" else "end_turn"
            return outcome
        results = []
        for use in tool_uses:
            tool_names[use["id"]] = use["name"]
            outcome.tool_calls += 1
            tool_result = _run_tool(session, use, outcome)
            summary = summarize_input(use["name"], use.get("input"))
            outcome.add_tool_line(use["name"], summary, tool_result.is_error)
            session.on_event(
                "tool_call", id=feature_id, feature=feature_id, turn=turn, tool=use["name"], summary=summary,
                isError=tool_result.is_error,
            )
            results.append(
                {"type": "tool_result", "tool_use_id": use["id"], "content": tool_result.content or "(no output)",
                 **({"is_error": True} if tool_result.is_error else {})}
            )
        messages.append({"role": "user", "content": results})
        if outcome.report is not None:
            outcome.stop = "reported"
            return outcome
    return outcome


def _call_event(session: AgentSession, feature_id: str, turn: int, result: CallResult) -> None:
    spend = session.client.spend
    session.on_event(
        "api_call", id=feature_id, feature=feature_id, turn=turn, model=session.model, usage=result.usage.dump(),
        costUsd=round(result.cost_usd, 6), stopReason=getattr(result.message, "stop_reason", None),
        runTokens=spend.run_tokens.total, runCostUsd=round(spend.run_cost_usd, 6),
    )


def _run_tool(session: AgentSession, use: ApiBlock, outcome: AttemptOutcome) -> ToolResult:
    if use["name"] == REPORT_TOOL:
        try:
            outcome.report = parse_report(use.get("input"))
        except ValueError as err:
            return ToolResult(f"report not accepted: {err}", is_error=True)
        return ToolResult("Report received. The orchestrator will now run the feature's check.")
    return execute_tool(use["name"], use.get("input"), session.tool_context)
