"""Claude Code's message stream, recorded as the built-in loop records its turns.

Each assistant message (one model call; the CLI sends a call's blocks as messages sharing its
id) is a turn; each tool call is counted, logged (`tool: what it did`, `logs ID`) and sent as a
`tool_call` event (to the working-memory log and the live view) once its result is back, with
whether it failed. The final `ResultMessage` gives the attempt's turns, tokens, cost and how it
ended. The model calls themselves (`api_call` events, spend) are booked by the metering proxy,
which sees every call; the SDK's own figures here are the attempt record's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from claude_agent_sdk import AssistantMessage, ResultMessage, TextBlock, ToolResultBlock, ToolUseBlock, UserMessage

from orchestrator.claude_code.metering.sse_usage import api_usage
from orchestrator.claude_code.session.report_server import QUALIFIED_NAME
from orchestrator.run.attempt.agent_loop import AgentEvent, AttemptOutcome
from orchestrator.store.event_kinds import Notice, ToolCall
from orchestrator.tools.report import TOOL_NAME as REPORT_TOOL
from orchestrator.tools.truncation import head_of

SUMMARY_CHARS = 200
# The input that says what a Claude Code tool call does, by the tool's own keys, first found wins.
_SUMMARY_KEYS = ("command", "file_path", "notebook_path", "pattern", "path", "url", "query", "description", "summary")
# How a session ended (`ResultMessage.subtype`), as the attempt's stop.
_STOPS = {"success": "end_turn", "error_max_turns": "max_turns", "error_max_budget_usd": "max_budget"}


def summarize(tool: str, tool_input: object) -> str:
    """A short, redacted line saying what a call does."""
    if not isinstance(tool_input, dict):
        return ""
    for key in _SUMMARY_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            return head_of(value.strip(), SUMMARY_CHARS)
    return ""


class StreamRecorder:
    """Turns, tool calls and the end of one attempt's session, into its `AttemptOutcome`."""

    def __init__(self, outcome: AttemptOutcome, feature_id: str, on_event: Callable[[AgentEvent], None]) -> None:
        self.outcome, self.feature_id, self.on_event = outcome, feature_id, on_event
        self.turn = 0
        self._calls: set[str] = set()  # ids of the model calls seen
        self._pending: dict[str, ToolUseBlock] = {}  # tool calls waiting for their result
        self.results: list[ResultMessage] = []  # one a turn of the session (a reminder makes a second)
        self.errored = False  # Claude Code said a message failed (sign-in, API error)

    def take(self, message: object) -> None:
        """Record one message of the stream (the kinds that say nothing here are let by)."""
        if isinstance(message, AssistantMessage):
            self._assistant(message)
        elif isinstance(message, UserMessage) and isinstance(message.content, list):
            for block in message.content:
                if isinstance(block, ToolResultBlock):
                    self._result(block)
        elif isinstance(message, ResultMessage):
            self._ended(message)

    def _assistant(self, message: AssistantMessage) -> None:
        call = message.message_id or f"turn-{len(self._calls) + 1}"
        if call not in self._calls:
            self._calls.add(call)
            self.turn += 1
            self.outcome.turns = self.turn
        if message.model:
            self.outcome.model = message.model
        for block in message.content:
            if isinstance(block, TextBlock) and block.text.strip() and message.parent_tool_use_id is None:
                self.outcome.final_text = block.text
            elif isinstance(block, ToolUseBlock):
                self._pending[block.id] = block
        if message.error:
            said = " ".join(block.text.strip() for block in message.content if isinstance(block, TextBlock))
            error = f"Claude Code: {message.error}" + (f": {head_of(said, SUMMARY_CHARS)}" if said else "")
            self.errored = True  # the turn did not end as a model's answer: no reminder to report
            self.on_event(Notice(type="warning", message=f"{self.feature_id}: {error}", id=self.feature_id))

    def _result(self, block: ToolResultBlock) -> None:
        use = self._pending.pop(block.tool_use_id, None)
        if use is None:
            return
        tool = REPORT_TOOL if use.name == QUALIFIED_NAME else use.name
        summary, failed = summarize(use.name, use.input), bool(block.is_error)
        self.outcome.tool_calls += 1
        self.outcome.add_tool_line(tool, summary, failed)
        self.on_event(ToolCall(id=self.feature_id, feature=self.feature_id, turn=self.turn, tool=tool,
                               summary=summary, is_error=failed))

    def _ended(self, turn_result: ResultMessage) -> None:
        self.results.append(turn_result)
        result = session_result(self.results)
        outcome = self.outcome
        outcome.turns = max(outcome.turns, result.num_turns)
        outcome.usage = api_usage(result.usage)
        outcome.cost_usd = result.total_cost_usd or 0.0
        outcome.final_text = result.result or outcome.final_text
        outcome.stop = _STOPS.get(result.subtype, "error")
        if result.is_error or outcome.stop == "error":
            errors = "; ".join(result.errors or []) or result.result or result.subtype
            outcome.error = f"Claude Code ended with {result.subtype}: {errors}"[:500]


def session_result(results: list[ResultMessage]) -> ResultMessage:
    """The session's result from its turns' results: each turn's usage and turns are its own (summed
    here), its cost is the session's so far (the last one's); how it ended is the last turn's."""
    last = results[-1]
    if len(results) == 1:
        return last
    usage: dict[str, object] = dict(last.usage or {})
    for key in ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"):
        usage[key] = sum(_count((result.usage or {}).get(key)) for result in results)
    return dataclasses.replace(last, usage=usage, num_turns=sum(result.num_turns for result in results))


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
