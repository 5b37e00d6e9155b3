"""Issue 27: `orchestrate logs ID` is a view for a human; `--json` prints the stored log."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.cli_helpers import read_json, run_cli, write_spec
from tests.e2e.commands.test_run_lines_e2e import CHECK_1, _breaking_feature_2
from tests.git_helpers import init_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return init_repo(tmp_path / "repo", {"README": "repo\n", ".gitignore": "__pycache__/\n"})


def test_logs_id_shows_each_attempt_its_tools_its_check_and_the_footprint(fake_api: Any, repo: Path) -> None:
    spec = _breaking_feature_2(fake_api, repo)
    assert run_cli(["run", str(spec)], repo, fake_api).code == 0

    shown = run_cli(["logs", "feat-02"], repo)

    assert shown.code == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0] == "feat-02: two (core)"
    assert re.match(r"passed after 2 attempt\(s\), [\d.]+ s, [\d,]+ tokens \(input [\d,]+, output [\d,]+", lines[1])
    assert "footprint: changed two.txt; check reads (nothing)" in lines  # lib.py is back as it was
    attempts = [line for line in lines if line.startswith("attempt ")]
    assert len(attempts) == 2 and all(
        re.fullmatch(r"attempt \d: claude-[\w.-]+, 2 turn\(s\), [\d,]+ tokens, \$\d\.\d{4}, 3 tool call\(s\), "
                     r"stopped: reported", line) for line in attempts), attempts
    assert lines.count("    str_replace_based_edit_tool: create lib.py") == 2
    assert "    check `test -f two.txt` passed" in lines
    assert f"    check `{CHECK_1}` FAILED (exit 1): the feature's own check passed, but the attempt broke feature feat-01" in "\n".join(lines)
    assert "fix your change" not in shown.stdout  # what the agent was told is not quoted to the user
    assert "    regression: 1 check(s) re-run, 1 FAILED (feat-01)" in lines
    raw = run_cli(["logs", "feat-02", "--json"], repo)
    assert json.loads(raw.stdout) == read_json(repo / ".autonomous/logs/feat-02.json")


def test_a_checks_output_is_shown_as_lines_of_text(fake_api: Any, repo: Path) -> None:
    spec = write_spec(repo, 1, verify="echo 'first line'; echo 'a \"quoted\" one'; test -f features/{id}.txt")
    assert run_cli(["run", str(spec)], repo, fake_api).code == 0

    shown = run_cli(["logs", "feat-01"], repo).stdout.splitlines()

    at = shown.index("      | first line")
    assert shown[at + 1] == '      | a "quoted" one'
