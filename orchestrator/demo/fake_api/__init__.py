"""A local fake of the Anthropic Messages API for tests, benchmarks and `orchestrate demo`.

Serves ``POST /v1/messages`` and ``POST /v1/messages/count_tokens`` over real HTTP on
127.0.0.1, with the API's authentication, validation, error shapes, usage and prompt-caching
rules, a scripted coding agent per feature, a summarizer for structured-output requests, and
fault injection. See `FakeAPI`.

    with FakeAPI() as fake:
        client = anthropic.Anthropic(base_url=fake.base_url, api_key="test-key")
"""

from .agent_turn import AgentTurn, ToolResult
from .caching import ManualClock, PromptCache
from .faults import FailCalls, FailFirst, Fault, RandomFaults
from .forced_tools import ScriptedToolAnswers, default_tool_answer, forced_tool_name, request_text
from .ledger import RecordedRequest, UsageReport, UsageTotals
from .plans import (
    bash,
    cut_tool_use,
    default_plan,
    done_text,
    edit_create,
    edit_str_replace,
    edit_view,
    load_plans,
    report,
    stop_reason,
    text,
    tool_use,
)
from .server import FakeAPI
from .summarizer import default_summarizer, empty_summarizer, minimal_instance, plausible_summary

__all__ = [
    "AgentTurn",
    "FailCalls",
    "FailFirst",
    "FakeAPI",
    "Fault",
    "ManualClock",
    "PromptCache",
    "RandomFaults",
    "RecordedRequest",
    "ScriptedToolAnswers",
    "ToolResult",
    "UsageReport",
    "UsageTotals",
    "bash",
    "cut_tool_use",
    "default_plan",
    "default_summarizer",
    "default_tool_answer",
    "done_text",
    "edit_create",
    "edit_str_replace",
    "edit_view",
    "empty_summarizer",
    "forced_tool_name",
    "load_plans",
    "minimal_instance",
    "plausible_summary",
    "report",
    "request_text",
    "stop_reason",
    "text",
    "tool_use",
]
