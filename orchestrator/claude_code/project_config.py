"""`--claude-settings project`: the project's Claude Code configuration as it was when the run
began, never what an agent wrote during the run.

Claude Code reads its project configuration from the working tree at each session's start:
`.claude/settings.json` (hooks, `env`, permissions, ...), `CLAUDE.md`, agent definitions, skills.
The tree is the agent's to write, so with the CLI's own `project` source one feature's agent
configured the next feature's session: a SessionStart hook ran its program, an `env` of
`CLAUDE_CODE_SHELL_PREFIX=""` took the sign-in's mask off. So the CLI is given no setting source at
all, and the run reads the project's configuration once, at its first attempt, before any agent
ran: `.claude/settings.json` is passed as the session's `--settings`, without what runs a
program or changes the CLI's environment (`NEVER_LOADED`, and `disableAllHooks`), and `CLAUDE.md`
is appended to the system prompt. Agent definitions, skills, commands and `.mcp.json` are not
loaded (`--mcp-config` names servers). A run resumed later reads the tree again as it then is
(hooks and `env` never).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from orchestrator.json_types import JsonObject

# Settings that run a program or set the CLI's environment: never taken from the project.
NEVER_LOADED = ("hooks", "env", "apiKeyHelper", "awsAuthRefresh", "awsCredentialExport", "otelHeadersHelper",
                "statusLine", "enableAllProjectMcpServers", "enabledMcpjsonServers", "forceLoginMethod")
MEMORY_LIMIT = 64 * 1024  # characters of CLAUDE.md carried into the system prompt


@dataclass(frozen=True)
class ProjectConfig:
    """What of the project's Claude Code configuration a session gets."""

    settings: JsonObject
    memory: str  # CLAUDE.md, or ""

    def settings_json(self) -> str:
        return json.dumps({**self.settings, "disableAllHooks": True})

    def system_addition(self) -> str:
        if not self.memory.strip():
            return ""
        return f"\n\n# CLAUDE.md (the project's instructions, as they were when the run began)\n\n{self.memory}"


def read_project_config(root: Path) -> ProjectConfig:
    """The configuration in `root` now (call it before any agent ran); what cannot be read is left out."""
    settings: JsonObject = {}
    try:
        data = json.loads((root / ".claude" / "settings.json").read_text(encoding="utf-8"))
        if isinstance(data, dict):
            settings = {key: value for key, value in data.items() if key not in NEVER_LOADED}
    except (OSError, UnicodeDecodeError, ValueError):
        pass
    try:
        memory = (root / "CLAUDE.md").read_text(encoding="utf-8", errors="replace")[:MEMORY_LIMIT]
    except OSError:
        memory = ""
    return ProjectConfig(settings, memory)
