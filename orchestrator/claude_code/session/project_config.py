"""The project's own Claude Code configuration: only the kinds the user allows, and only as it
was when the run began, never what an agent wrote during the run.

Claude Code reads its project configuration from the working tree at each session's start:
`.claude/settings.json` (hooks, `env`, permissions, ...), `CLAUDE.md`, agent definitions, skills,
`.mcp.json`. The tree is the agent's to write, so with the CLI's own `project` source one
feature's agent configured the next feature's session: a SessionStart hook ran its program, an
`env` of `CLAUDE_CODE_SHELL_PREFIX=""` took the sign-in's mask off. So the CLI is given no setting
source at all, and the run loads what the user allows (`claude_code_allow`, and settings and
CLAUDE.md under `--claude-settings project`) itself:

- `settings`: `.claude/settings.json`, passed as the session's `--settings` without what runs a
  program or changes the CLI's environment (`NEVER_LOADED`, and `disableAllHooks`);
- `claude-md`: `CLAUDE.md`, appended to the system prompt;
- `agents`: `.claude/agents/*.md`, passed as the session's agent definitions (description,
  prompt, tools and model only: no hooks, MCP servers or permission mode of their own);
- `mcp`: `.mcp.json`'s `mcpServers`, beside `--mcp-config`'s (whose servers win).

When the run first begins, before any agent worked, every such file is recorded by its digest in
the run's state (`config_digests`); the content is read then. A resumed run reads the tree again
but takes a file only if it is byte for byte what the run began with: a file an agent wrote or
changed during an earlier part of the run is left out, and said so. Hooks and `env` are never
loaded; skills, commands and `settings.local.json` are not loaded at all.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.json_types import JsonObject

# Settings that run a program or set the CLI's environment: never taken from the project.
NEVER_LOADED = ("hooks", "env", "apiKeyHelper", "awsAuthRefresh", "awsCredentialExport", "otelHeadersHelper",
                "statusLine", "enableAllProjectMcpServers", "enabledMcpjsonServers", "forceLoginMethod")
MEMORY_LIMIT = 64 * 1024  # characters of CLAUDE.md carried into the system prompt
FILE_LIMIT = 1024 * 1024  # a configuration file larger than this is not read
MAX_AGENTS = 50  # agent definitions read, by name

SETTINGS, MEMORY, MCP, AGENTS_DIR = ".claude/settings.json", "CLAUDE.md", ".mcp.json", ".claude/agents"


@dataclass(frozen=True)
class ProjectConfig:
    """What of the project's Claude Code configuration a session gets."""

    settings: JsonObject
    memory: str  # CLAUDE.md, or ""
    agents: dict[str, JsonObject] = field(default_factory=dict)  # name -> AgentDefinition's fields
    mcp_servers: dict[str, object] = field(default_factory=dict)
    left_out: tuple[str, ...] = ()  # files not as the run began: written or changed during the run

    def settings_json(self) -> str:
        return json.dumps({**self.settings, "disableAllHooks": True})

    def system_addition(self) -> str:
        if not self.memory.strip():
            return ""
        return f"\n\n# CLAUDE.md (the project's instructions, as they were when the run began)\n\n{self.memory}"


def _candidates(root: Path) -> list[str]:
    """The configuration files that may be loaded, relative to `root` (agent definitions by name)."""
    names = [SETTINGS, MEMORY, MCP]
    agents = root / AGENTS_DIR
    try:
        if not agents.is_symlink() and not (root / ".claude").is_symlink() and agents.is_dir():
            found = sorted(entry.name for entry in os.scandir(agents) if entry.name.endswith(".md"))
            names += [f"{AGENTS_DIR}/{name}" for name in found[:MAX_AGENTS]]
    except OSError:
        pass
    return names


def _read(root: Path, relative: str) -> bytes | None:
    """The file's bytes, or None: missing, not a regular file, reached through a link, or too large."""
    folders = list(Path(relative).parents)[:-1]  # `.claude`, ...: none may be a link (the file: O_NOFOLLOW)
    try:
        if any((root / folder).is_symlink() for folder in folders):
            return None
        fd = os.open(root / relative, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except (OSError, ValueError):
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > FILE_LIMIT:
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(FILE_LIMIT + 1)[:FILE_LIMIT]
    except OSError:
        return None
    finally:
        os.close(fd)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def config_digests(root: Path) -> dict[str, str]:
    """Every configuration file in `root` now, path -> sha256: the record of the run's start."""
    found = {}
    for relative in _candidates(root):
        data = _read(root, relative)
        if data is not None:
            found[relative] = _digest(data)
    return found


def read_project_config(root: Path, kinds: Collection[str], at_start: Mapping[str, str]) -> ProjectConfig:
    """The allowed `kinds` of the configuration in `root`, each file only if it is as `at_start`
    recorded it; what cannot be read is left out."""
    current: dict[str, bytes] = {}
    left_out = []
    for relative in _candidates(root):
        data = _read(root, relative)
        if data is None:
            continue
        if at_start.get(relative) == _digest(data):
            current[relative] = data
        elif _kind_of(relative) in kinds:
            left_out.append(relative)
    return ProjectConfig(
        settings=_settings(current.get(SETTINGS)) if "settings" in kinds else {},
        memory=_text(current.get(MEMORY))[:MEMORY_LIMIT] if "claude-md" in kinds else "",
        agents=_agents(current) if "agents" in kinds else {},
        mcp_servers=_servers(current.get(MCP)) if "mcp" in kinds else {},
        left_out=tuple(left_out),
    )


def _kind_of(relative: str) -> str:
    return {SETTINGS: "settings", MEMORY: "claude-md", MCP: "mcp"}.get(relative, "agents")


def _text(data: bytes | None) -> str:
    return data.decode("utf-8", errors="replace") if data else ""


def _json_object(data: bytes | None) -> JsonObject:
    try:
        value = json.loads(_text(data)) if data else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _settings(data: bytes | None) -> JsonObject:
    return {key: value for key, value in _json_object(data).items() if key not in NEVER_LOADED}


def _servers(data: bytes | None) -> dict[str, object]:
    servers = _json_object(data).get("mcpServers")
    return dict(servers) if isinstance(servers, dict) else {}


def _agents(files: Mapping[str, bytes]) -> dict[str, JsonObject]:
    agents: dict[str, JsonObject] = {}
    for relative, data in files.items():
        if relative.startswith(AGENTS_DIR + "/"):
            parsed = _agent_definition(_text(data))
            if parsed is not None:
                name, definition = parsed
                agents.setdefault(name or Path(relative).stem, definition)
    return agents


def _agent_definition(text: str) -> tuple[str, JsonObject] | None:
    """(name, fields) of an agent definition file: `---` front matter of `key: value` lines, then
    its prompt; None without a description (Claude Code would not load it either)."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---" or "---" not in (line.strip() for line in lines[1:]):
        return None
    end = next(index for index in range(1, len(lines)) if lines[index].strip() == "---")
    front = {}
    for line in lines[1:end]:
        key, sep, value = line.partition(":")
        if sep and key.strip() and not line[:1].isspace():
            front[key.strip()] = value.strip().strip("\"'")
    if not front.get("description"):
        return None
    definition: JsonObject = {"description": front["description"], "prompt": "\n".join(lines[end + 1:]).strip()}
    if front.get("tools"):
        definition["tools"] = [tool.strip() for tool in front["tools"].split(",") if tool.strip()]
    if front.get("model"):
        definition["model"] = front["model"]
    return front.get("name", ""), definition
