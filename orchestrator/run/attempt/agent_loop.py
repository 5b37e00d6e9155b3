"""The agent loop of one attempt: call the model, run the tools it asks for, until it reports.

The loop ends when the agent calls `report_feature`, ends its turn without a tool call, or
uses up its turns. A tool that fails answers with `is_error: true` and the loop goes on;
nothing the agent sends can raise out of here except the model client's own exceptions
(limits, an unreachable API) and an interrupt.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from orchestrator.json_types import ApiBlock, ApiMessage, ApiRequest, ThinkingFields
from orchestrator.llm.client import CallResult, ModelClient
from orchestrator.llm.conversation import (
    AttemptRequestTokens,
    ObservationBook,
    cached_system,
    mask_old_observations,
    with_cached_tools,
    with_conversation_breakpoint,
)
from orchestrator.llm.costs.pricing import TokenUsage
from orchestrator.llm.errors import ModelRequestRejected
from orchestrator.llm.reply_blocks import reply_blocks
from orchestrator.store.event_kinds import ApiCall, Notice, ToolCall
from orchestrator.tools.context import ToolContext, ToolResult
from orchestrator.tools.dispatch import execute_tool
from orchestrator.tools.registry import summarize_input, tool_definitions
from orchestrator.tools.report import REPORT_RECEIVED, FeatureReport, parse_report
from orchestrator.tools.report import TOOL_NAME as REPORT_TOOL

if TYPE_CHECKING:  # the SDK's types, for the checker only
    from anthropic.types import ContentBlock, ToolResultBlockParam, ToolUnionParam, ToolUseBlock

MAX_TOOL_LINES = 200
AgentEvent = ApiCall | ToolCall | Notice  # what the loop tells its recorder, as it happens


@dataclass
class AttemptOutcome:
    """How one attempt's agent loop ended."""

    # "reported" | "end_turn" | "max_turns" | "max_tokens" | "rejected" | "refusal" | "model_context_window_exceeded"
    stop: str
    report: FeatureReport | None = None
    final_text: str = ""
    turns: int = 0
    tool_calls: int = 0
    masked: int = 0
    error: str | None = None
    model: str | None = None  # the model that made the attempt's calls
    final: str | None = None  # why another attempt would meet the same end (a refusal, a refused first request)
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
    on_event: Callable[[AgentEvent], None] = lambda _event: None
    tools: list[ToolUnionParam] = field(default_factory=tool_definitions)
    # Added to every request of the attempt: `thinking` and its beta header (`AttemptModel.request_fields`).
    request_fields: ThinkingFields = field(default_factory=ThinkingFields)
    attempt: int = 1  # which attempt of the feature this is (the metering proxy journals it)


# How an answer can end besides a tool call or the end of its turn, as the API names them.
REFUSAL, WINDOW_FULL, PAUSED, CUT_OFF = "refusal", "model_context_window_exceeded", "pause_turn", "max_tokens"
STOP_NOTES = {
    REFUSAL: "the model refused to continue (stop_reason refusal)",
    WINDOW_FULL: "the conversation filled the model's context window (stop_reason model_context_window_exceeded)",
    CUT_OFF: "the model's answer was cut off at max_tokens",
    "rejected": "the API rejected the request",
}
REPORT_REMINDER = (
    "You ended your turn without calling `report_feature`. If the feature is done, call it now with your summary "
    "(and `defective_check` if its check itself is wrong); if not, go on working."
)
CUT_TOOL_RESULT = (
    "Not run: your answer was cut off at max_tokens ({max_tokens} tokens) in the middle of this tool call, so its "
    "input is incomplete. Call the tool again with a shorter input (for a large file, write it in several steps)."
)


def stop_note(stop: str) -> str | None:
    """What an attempt's unusual end means, for the console, the log and the retry prompt."""
    return STOP_NOTES.get(stop)


def run_agent(session: AgentSession, history: list[ApiMessage], prompt: str, feature_id: str) -> AttemptOutcome:
    """Run the agent on `prompt` (after `history` messages, if any) until it stops."""
    messages: list[ApiMessage] = [*history, {"role": "user", "content": [{"type": "text", "text": prompt}]}]
    loop = _Loop(session, feature_id, messages)
    for turn in range(1, session.max_turns + 1):
        if loop.turn(turn):
            return loop.outcome
    return loop.outcome


class _Loop:
    """One attempt's conversation, turn by turn (`turn` returns True when the attempt is over)."""

    def __init__(self, session: AgentSession, feature_id: str, messages: list[ApiMessage]) -> None:
        self.session, self.feature_id, self.messages = session, feature_id, messages
        self.book = ObservationBook()  # masking's bookkeeping, beside the messages the API sees
        self.system = cached_system(session.system)
        self.tools = with_cached_tools(session.tools)
        self.size = AttemptRequestTokens(self.system, self.tools)
        self.outcome = AttemptOutcome(stop="max_turns", model=session.model)
        self.unknown_said: set[str] = set()
        self.reminded = False  # one reminder to report, when a turn ends without the report

    def _request(self) -> tuple[ApiRequest, int]:
        rewritten: set[int] = set()
        self.outcome.masked += mask_old_observations(
            self.messages, self.session.mask_after_tokens, self.book, rewritten
        )
        request: ApiRequest = {
            "model": self.session.model, "max_tokens": self.session.max_output_tokens, "system": self.system,
            "tools": self.tools, "messages": with_conversation_breakpoint(self.messages),
        }
        # Key by key, not `**fields`: mypy cannot tell that a `ThinkingFields` holds no other key of a request.
        fields = self.session.request_fields
        if "thinking" in fields:
            request["thinking"] = fields["thinking"]
        if "extra_headers" in fields:
            request["extra_headers"] = fields["extra_headers"]
        return request, self.size.tokens(self.messages, rewritten)

    def turn(self, turn: int) -> bool:
        session, outcome = self.session, self.outcome
        request, size = self._request()
        try:
            result = session.client.create(purpose="agent", input_tokens=size, **request)
        except ModelRequestRejected as err:
            outcome.stop, outcome.error = "rejected", str(err)
            # The first request of an attempt is what the next attempt would send again.
            outcome.final = f"{err} (the same request would be refused again)" if turn == 1 else None
            self._warn(str(err))
            return True
        outcome.turns = turn
        outcome.usage, outcome.cost_usd = outcome.usage + result.usage, outcome.cost_usd + result.cost_usd
        message, stop_reason = result.message, result.message.stop_reason
        _call_event(session, self.feature_id, turn, result)
        blocks = self._blocks(message.content)
        self.messages.append({"role": "assistant", "content": blocks or [{"type": "text", "text": "(no content)"}]})
        text = "\n".join(b["text"] for b in blocks if b["type"] == "text" and b["text"])
        outcome.final_text = text or outcome.final_text
        if stop_reason == PAUSED:
            return False  # the API paused a long turn: sent back as it is, the model goes on
        tool_uses = [block for block in message.content if block.type == "tool_use"]
        if not tool_uses:
            return self._ended(stop_reason, text)
        cut = tool_uses[-1] if stop_reason == CUT_OFF else None
        if cut is not None:
            self._warn(f"{stop_note(CUT_OFF)} ({request['max_tokens']} tokens) inside a {cut.name} call: "
                       "not run; the model was told to send it again, shorter")
        self.messages.append({"role": "user", "content": [self._result(turn, use, use is cut) for use in tool_uses]})
        if outcome.report is not None:
            outcome.stop = "reported"
            return True
        return False

    def _blocks(self, content: list[ContentBlock]) -> list[ApiBlock]:
        blocks, unknown = reply_blocks(content)
        for kind in unknown:
            if kind not in self.unknown_said:
                self.unknown_said.add(kind)
                self._warn(f"the model's answer held a block of unknown type {kind!r}; left out of the conversation")
        return blocks

    def _ended(self, stop_reason: str | None, text: str) -> bool:
        outcome = self.outcome
        outcome.stop = stop_reason if stop_reason in (CUT_OFF, REFUSAL, WINDOW_FULL) else "end_turn"
        if outcome.stop == "end_turn" and not self.reminded:  # its summary would be lost: ask once
            self.reminded = True
            self.messages.append({"role": "user", "content": [{"type": "text", "text": REPORT_REMINDER}]})
            return False
        note = stop_note(outcome.stop)
        if note is not None:
            outcome.error = note + (f": {text[:200]}" if text else "")
            self._warn(outcome.error)
        if outcome.stop == REFUSAL:  # the same prompt would be refused again
            outcome.final = outcome.error
        return True

    def _result(self, turn: int, use: ToolUseBlock, cut: bool) -> ToolResultBlockParam:
        session, outcome = self.session, self.outcome
        self.book.tool_names[use.id] = use.name
        outcome.tool_calls += 1
        if cut:
            tool_result = ToolResult(CUT_TOOL_RESULT.format(max_tokens=session.max_output_tokens), is_error=True)
        else:
            tool_result = _run_tool(session, use, outcome)
        summary = summarize_input(use.name, use.input)
        outcome.add_tool_line(use.name, summary, tool_result.is_error)
        session.on_event(ToolCall(
            id=self.feature_id, feature=self.feature_id, turn=turn, tool=use.name, summary=summary,
            is_error=tool_result.is_error,
        ))
        answer: ToolResultBlockParam = {
            "type": "tool_result", "tool_use_id": use.id, "content": tool_result.content or "(no output)",
        }
        if tool_result.is_error:
            answer["is_error"] = True
        return answer

    def _warn(self, message: str) -> None:
        self.session.on_event(Notice(type="warning", message=f"{self.feature_id}: {message}", id=self.feature_id))


def _call_event(session: AgentSession, feature_id: str, turn: int, result: CallResult) -> None:
    spend = session.client.spend
    session.on_event(ApiCall(
        id=feature_id, feature=feature_id, turn=turn, attempt=session.attempt, model=session.model, usage=result.usage,
        cost_usd=round(result.cost_usd, 6), stop_reason=result.message.stop_reason,
        run_tokens=spend.run.tokens.total, run_cost_usd=round(spend.run.cost_usd, 6),
    ))


def _run_tool(session: AgentSession, use: ToolUseBlock, outcome: AttemptOutcome) -> ToolResult:
    if use.name == REPORT_TOOL:
        try:
            outcome.report = parse_report(use.input)
        except ValueError as err:
            return ToolResult(f"report not accepted: {err}", is_error=True)
        return ToolResult(REPORT_RECEIVED)
    return execute_tool(use.name, use.input, session.tool_context)
