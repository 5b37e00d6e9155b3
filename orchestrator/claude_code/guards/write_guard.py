"""Claude Code's file tools refused on what the built-in editor refuses: a `PreToolUse` hook.

Write, Edit, MultiEdit and NotebookEdit are judged by the editor's own rules
(`orchestrator.tools.confinement`): a path outside the workspace, under `.autonomous/` or
`.git/`, `orchestrate.toml`, or one of the feature's check files is denied, with the reason the
model reads. Its commands (Bash) meet the sandbox instead, which mounts those paths read-only,
and the job's guard restores a check file changed any other way. Every file tool (Read, Grep
and Glob too) is also refused on the CLI's own sign-in in its home (`sign_in`).
"""

from __future__ import annotations

import os
from pathlib import Path

from claude_agent_sdk import (
    CanUseTool,
    HookContext,
    HookInput,
    HookJSONOutput,
    HookMatcher,
    PermissionResult,
    PermissionResultAllow,
    PermissionResultDeny,
    ToolPermissionContext,
)

from orchestrator.claude_code.guards.sandbox_view import SandboxView
from orchestrator.claude_code.guards.sign_in import sign_in_refusal
from orchestrator.json_types import ToolInput
from orchestrator.tools.confinement import PathRefused, check_writable, resolve_in_project
from orchestrator.tools.context import ToolContext

# The tools that change files, and the input key that names the file.
WRITING_TOOLS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}


def refusal(
    tool_name: str, tool_input: ToolInput, context: ToolContext, home: Path | None = None, view: SandboxView | None = None,
) -> str | None:
    """Why `tool_name` may not run with `tool_input` here; None when it may. `home` is the CLI's
    (None: the user's own, where a plan's sign-in is); `view` its sandbox's, where paths resolve."""
    home = Path(os.path.expanduser("~")) if home is None else home
    secret = sign_in_refusal(tool_name, tool_input, home, context.environment.workspace, view)
    if secret is not None:
        return secret
    key = WRITING_TOOLS.get(tool_name)
    if key is None:
        return None
    try:
        check_writable(resolve_in_project(tool_input.get(key), context.project_root), context)
    except PathRefused as err:
        return str(err)
    return None


def write_guard(context: ToolContext, home: Path | None = None, view: SandboxView | None = None) -> HookMatcher:
    """The hook, for every tool (it judges the writing ones); a hook that fails blocks the call."""

    async def pre_tool_use(data: HookInput, _tool_use_id: str | None, _context: HookContext) -> HookJSONOutput:
        if data["hook_event_name"] != "PreToolUse":
            return {}
        reason = refusal(data["tool_name"], data["tool_input"], context, home, view)
        if reason is None:
            return {}
        return {"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": reason,
        }}

    return HookMatcher(matcher=None, hooks=[pre_tool_use], on_failure="block")


def unattended(context: ToolContext, home: Path | None = None, view: SandboxView | None = None) -> CanUseTool:
    """The answer to what would prompt a user: yes, unless the write guard refuses (no one is there to ask)."""

    async def can_use_tool(name: str, tool_input: ToolInput, _context: ToolPermissionContext) -> PermissionResult:
        reason = refusal(name, tool_input, context, home, view)
        return PermissionResultAllow() if reason is None else PermissionResultDeny(message=reason)

    return can_use_tool
