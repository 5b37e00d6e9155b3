"""The agent's tools and the rules that confine them to the project.

    execute_tool(name, input, ctx) -> ToolResult   run one tool call; never raises for model input
    tool_definitions()                              the tool params sent to the API
    ToolContext                                     project root, protected files, limits, policy
    ShellPolicy                                     the bash deny-list

See `confinement` (paths), `shell_policy` (bash deny-list), `orchestrator.safety.secrets` (environment
and redaction) and `orchestrator.run.protect` (check files) for the security rules.
"""

from orchestrator.tools.context import ToolContext, ToolError, ToolInputError, ToolResult
from orchestrator.tools.definitions import tool_definitions
from orchestrator.tools.dispatch import execute_tool
from orchestrator.tools.report import FeatureReport, parse_report
from orchestrator.tools.shell_policy import DenyRule, ShellPolicy

__all__ = [
    "DenyRule",
    "FeatureReport",
    "ShellPolicy",
    "ToolContext",
    "ToolError",
    "ToolInputError",
    "ToolResult",
    "execute_tool",
    "parse_report",
    "tool_definitions",
]
