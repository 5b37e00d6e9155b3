"""The tool definitions sent with every agent request.

Bash and the text editor are Anthropic-defined, schema-less tools: the model knows their
inputs, so only `type` and `name` are sent (the names are fixed by the API). `report_feature`
is ours and carries a JSON schema. The list is identical on every call so that it stays in the
prompt cache.
"""

from __future__ import annotations

from typing import Any

from orchestrator.tools import bash, editor, report


def tool_definitions() -> list[dict[str, Any]]:
    """A fresh list of the three tools: bash, the text editor, and report_feature."""
    return [
        {"type": "bash_20250124", "name": bash.TOOL_NAME},
        {"type": "text_editor_20250728", "name": editor.TOOL_NAME},
        report.report_tool_definition(),
    ]
