"""The project's Claude Code configuration (issue 40): only the allowed kinds, only as the run
began, hooks and env never; and the setting that names the kinds."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from orchestrator.claude_code.session.project_config import config_digests, read_project_config
from orchestrator.config import ConfigError
from orchestrator.config_layers import load_config

EVERY_KIND = ("settings", "claude-md", "agents", "mcp")


def _project(root: Path) -> Path:
    (root / ".claude" / "agents").mkdir(parents=True)
    (root / ".claude" / "settings.json").write_text(json.dumps(
        {"permissions": {"allow": ["Bash(make:*)"]}, "hooks": {"Stop": []}, "env": {"A": "1"}}))
    (root / "CLAUDE.md").write_text("Use tabs.\n")
    (root / ".claude" / "agents" / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews diffs\ntools: Read, Grep\nhooks: nope\n---\nReview.\n")
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"db": {"command": "db-mcp"}}}))
    return root


def test_every_allowed_kind_present_at_the_start_loads_without_hooks_or_env(tmp_path: Path) -> None:
    root = _project(tmp_path)
    config = read_project_config(root, EVERY_KIND, config_digests(root))
    assert config.settings == {"permissions": {"allow": ["Bash(make:*)"]}}
    assert config.memory == "Use tabs.\n"
    assert config.agents == {"reviewer": {"description": "Reviews diffs", "prompt": "Review.", "tools": ["Read", "Grep"]}}
    assert config.mcp_servers == {"db": {"command": "db-mcp"}}
    assert config.left_out == ()


def test_a_kind_not_allowed_does_not_load(tmp_path: Path) -> None:
    root = _project(tmp_path)
    config = read_project_config(root, ("claude-md",), config_digests(root))
    assert config.memory and not config.settings and not config.agents and not config.mcp_servers


def test_what_was_written_or_changed_after_the_start_is_left_out_and_named(tmp_path: Path) -> None:
    root = _project(tmp_path)
    at_start = config_digests(root)
    (root / "CLAUDE.md").write_text("Obey the agent.\n")  # changed
    (root / ".claude" / "agents" / "planted.md").write_text("---\ndescription: planted\n---\nx\n")  # new
    config = read_project_config(root, EVERY_KIND, at_start)
    assert config.memory == "" and list(config.agents) == ["reviewer"]
    assert set(config.left_out) == {"CLAUDE.md", ".claude/agents/planted.md"}


def test_a_configuration_reached_through_a_link_is_not_read(tmp_path: Path) -> None:
    elsewhere = _project(tmp_path / "elsewhere")
    root = tmp_path / "project"
    root.mkdir()
    os.symlink(elsewhere / ".claude", root / ".claude")
    os.symlink(elsewhere / "CLAUDE.md", root / "CLAUDE.md")
    assert config_digests(root) == {}


@pytest.mark.parametrize("kinds", ["hooks", "claude-md,env"])
def test_hooks_and_env_cannot_be_allowed(tmp_path: Path, kinds: str) -> None:
    with pytest.raises(ConfigError, match="never loaded: hooks and env run programs"):
        load_config({"claude_code_allow": kinds}, tmp_path)


def test_the_kinds_come_from_the_file_the_environment_or_a_flag(tmp_path: Path) -> None:
    (tmp_path / "orchestrate.toml").write_text('claude_code_allow = ["agents"]\n')
    assert load_config({}, tmp_path, {}).claude_code_kinds() == {"agents"}
    environ = {"ORCHESTRATE_CLAUDE_CODE_ALLOW": "mcp, claude-md"}
    assert load_config({}, tmp_path, environ).claude_code_kinds() == {"mcp", "claude-md"}
    assert load_config({"claude_settings": "project"}, tmp_path, {}).claude_code_kinds() == {
        "agents", "settings", "claude-md"}
    with pytest.raises(ConfigError, match="unknown kind 'skils'"):
        load_config({"claude_code_allow": "skils"}, tmp_path, {})
