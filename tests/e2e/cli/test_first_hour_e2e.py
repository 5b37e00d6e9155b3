"""What a newcomer trips over in the first hour (issue 43), driven through the real CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_helpers import run_cli, write_spec


@pytest.mark.parametrize("command", [["run", "spec.json"], ["plan", "idea.md", "-o", "planned.json"]])
def test_a_newline_in_the_base_url_is_one_line_and_exit_2_before_any_work(command: list[str], tmp_path: Path) -> None:
    write_spec(tmp_path, 1)
    (tmp_path / "idea.md").write_text("# A widget\n\nA tiny widget library.\n")

    result = run_cli(command, tmp_path, ANTHROPIC_BASE_URL="http://127.0.0.1:9\n")

    assert result.code == 2, result.stdout + result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    assert "ANTHROPIC_BASE_URL" in result.stderr and "a newline" in result.stderr
    assert not (tmp_path / ".autonomous").exists() and not (tmp_path / "planned.json").exists()
