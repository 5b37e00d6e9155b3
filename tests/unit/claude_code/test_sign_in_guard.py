"""The guard's decisions on Claude Code's sign-in: every file tool refused on it, by any
spelling (`~`, relative, a link to it, a search that contains it), and left alone elsewhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.claude_code.guards.sign_in import shell_prefix, sign_in_refusal


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home" / ".claude").mkdir(parents=True)
    (tmp_path / "home" / ".claude" / ".credentials.json").write_text("{}")
    (tmp_path / "home" / ".claude.json").write_text("{}")
    (tmp_path / "project").mkdir()
    return tmp_path / "home"


def _refused(home: Path, tool: str, **tool_input: str) -> bool:
    return sign_in_refusal(tool, tool_input, home, home.parent / "project") is not None


@pytest.mark.parametrize(("tool", "tool_input"), [
    ("Read", {"file_path": "{home}/.claude/.credentials.json"}),
    ("Read", {"file_path": "~/.claude/.credentials.json"}),
    ("Read", {"file_path": "~/.claude.json"}),
    ("Read", {"file_path": "../home/.claude/settings.json"}),  # relative to the workspace
    ("NotebookRead", {"notebook_path": "{home}/.claude.json"}),
    ("Edit", {"file_path": "~/.claude/.credentials.json"}),
    ("Write", {"file_path": "{home}/.claude.json"}),
    ("Grep", {"pattern": "sk-ant", "path": "{home}"}),  # a search over the home contains the sign-in
    ("Grep", {"pattern": "sk-ant", "path": "/"}),
    ("Glob", {"pattern": "**/*.json", "path": "~"}),
    ("Glob", {"pattern": "{home}/.claude/**"}),  # an absolute pattern is its own root
    ("Glob", {"pattern": "../home/.claude/*"}),  # and a relative one leads where its fixed part goes
    ("LS", {"path": "{home}/.claude"}),
])
def test_every_file_tool_is_refused_on_the_sign_in(home, tool, tool_input):
    assert _refused(home, tool, **{key: value.format(home=home) for key, value in tool_input.items()})


def test_a_link_to_the_sign_in_is_the_sign_in(home):
    (home.parent / "project" / "link.json").symlink_to(home / ".claude" / ".credentials.json")
    assert _refused(home, "Read", file_path="link.json")


@pytest.mark.parametrize(("tool", "tool_input"), [
    ("Read", {"file_path": "src/app.py"}),
    ("Read", {"file_path": "{home}/notes.txt"}),
    ("Grep", {"pattern": "x"}),  # the workspace, which holds no sign-in
    ("Glob", {"pattern": "**/*.py"}),
    ("Glob", {"pattern": "{home}/src/*.py"}),
    ("Bash", {"command": "cat ~/.claude.json"}),  # commands meet the nested sandbox, not this guard
])
def test_other_paths_are_left_to_the_other_rules(home, tool, tool_input):
    assert not _refused(home, tool, **{key: value.format(home=home) for key, value in tool_input.items()})


def test_the_shell_prefix_masks_only_what_exists_and_runs_the_command_line_it_is_given(tmp_path):
    script = shell_prefix("/usr/bin/bwrap", "/bin/bash", tmp_path / "my home", tmp_path / "filter.bpf")
    assert script.startswith("#!/bin/sh\n") and "'" + str(tmp_path / "my home" / ".claude") + "'" in script
    assert "--tmpfs" in script and "--ro-bind /dev/null" in script and "--unshare-pid --proc /proc" in script
    assert "--cap-drop ALL" in script  # root's bubblewrap would keep them all
    assert script.rstrip().endswith(f'--seccomp 9 -- /bin/bash -c "$command" 9<{tmp_path / "filter.bpf"}')
