"""`report_feature` for Claude Code: the same tool, served in-process as an SDK MCP server.

Claude Code sees it as `mcp__orchestrate__report_feature`, with the built-in tool's description
and input schema (`orchestrator.tools.report`); an accepted report lands in a `ReportInbox`,
from where the attempt hands it to the Context Agent exactly as the built-in loop does.
"""

from __future__ import annotations

from dataclasses import dataclass

from claude_agent_sdk import McpSdkServerConfig, create_sdk_mcp_server, tool

from orchestrator.json_types import JsonObject, ToolInput
from orchestrator.tools.context import ToolInputError
from orchestrator.tools.report import REPORT_RECEIVED, TOOL_NAME, FeatureReport, parse_report, report_tool_definition

SERVER_NAME = "orchestrate"
QUALIFIED_NAME = f"mcp__{SERVER_NAME}__{TOOL_NAME}"  # the name Claude Code gives the model


@dataclass
class ReportInbox:
    """The attempt's accepted report (the last one, should the agent send two)."""

    report: FeatureReport | None = None

    def receive(self, tool_input: ToolInput) -> JsonObject:
        """The tool's answer to `tool_input`: accepted, or what to fix (an error result)."""
        try:
            self.report = parse_report(tool_input)
        except ToolInputError as err:
            return {"content": [{"type": "text", "text": f"report not accepted: {err}"}], "is_error": True}
        return {"content": [{"type": "text", "text": REPORT_RECEIVED}]}


def report_server(inbox: ReportInbox) -> McpSdkServerConfig:
    """The in-process MCP server named `orchestrate` with its one tool, `report_feature`."""
    definition = report_tool_definition()

    @tool(TOOL_NAME, str(definition["description"]), dict(definition["input_schema"]))
    async def report_feature(args: ToolInput) -> JsonObject:
        return inbox.receive(args)

    return create_sdk_mcp_server(name=SERVER_NAME, tools=[report_feature])
