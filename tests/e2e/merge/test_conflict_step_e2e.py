"""Issue 29, item 4: a merge conflict under `--jobs N` costs a focused step, not a whole attempt."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fake_messages_api.scripted_agent.forced_tools import ScriptedToolAnswers
from fake_messages_api.scripted_agent.plans import bash, report
from tests.cli_helpers import run_cli, write_spec


def _shared_file_spec(tmp_path: Path, fake_api: Any) -> tuple[Path, Path]:
    """Six features that each append a line to one file (tests/test_parallel_e2e.py's spec)."""
    root = tmp_path / "project"
    root.mkdir(parents=True)
    checks = {f"feat-{i:02d}": {"verify": f"grep -qx 'line {i}' \"$(echo share)d.txt\"", "max_attempts": 6}
              for i in range(1, 7)}
    spec = write_spec(tmp_path, 6, extra=checks)
    for i in range(1, 7):
        fake_api.plans[f"feat-{i:02d}"] = [[bash(f"echo 'line {i}' >> shared.txt")], [report(f"appended line {i}")]]
    return root, spec


def _model_calls(fake_api: Any) -> int:
    return len(fake_api.agent_requests()) + len(fake_api.forced_tool_calls)


def _attempts(events: list[dict[str, Any]]) -> dict[str, int]:
    return {e["id"]: e["attempts"] for e in events if e["type"] == "feature_finished"}


@pytest.mark.slow
def test_six_features_on_one_file_cost_at_most_half_again_the_serial_calls(tmp_path: Path, fake_api: Any) -> None:
    serial_root, spec = _shared_file_spec(tmp_path / "serial", fake_api)
    serial = run_cli(["run", str(spec), "--json"], cwd=serial_root, fake=fake_api)
    assert serial.code == 0, serial.stderr
    serial_calls = _model_calls(fake_api)
    fake_api.reset()

    root, spec = _shared_file_spec(tmp_path / "jobs", fake_api)
    result = run_cli(["run", str(spec), "--jobs", "3", "--json"], cwd=root, fake=fake_api)

    assert result.code == 0, result.stderr
    assert _model_calls(fake_api) <= 1.5 * serial_calls, (serial_calls, fake_api.ledger.kind_calls)
    assert set(_attempts(result.events()).values()) == {1}  # a resolved conflict costs no attempt
    merges = [e for e in result.events() if e["type"] == "merge"]
    assert [e["result"] for e in merges] == ["merged"] * 6
    resolved = [e for e in merges if e.get("message")]
    assert resolved and all("resolved by the model" in e["message"] for e in resolved)
    # Only the conflict went to the model: the hunks, the feature and its check, one forced tool.
    for request in fake_api.forced_tool_calls:
        assert request.body["tool_choice"] == {"type": "tool", "name": "resolve_merge_conflict"}
        prompt = request.body["messages"][0]["content"]
        listed = json.loads(prompt.rpartition("```json\n")[2].partition("\n```")[0])["hunks"]
        assert listed and all(h["file"] == "shared.txt" for h in listed) and "grep -qx" in prompt
    # Each footprint holds the file its work changed (committed in its worktree before the merge).
    state = json.loads((root / ".autonomous/state/execution-state.json").read_text())["features"]
    assert all("shared.txt" in entry["footprint"]["changed"] for entry in state.values())
    lines = (root / "shared.txt").read_text().splitlines()
    assert sorted(lines) == (serial_root / "shared.txt").read_text().splitlines()  # same lines, merge order
    assert "<<<<<<<" not in (root / "shared.txt").read_text()


@pytest.mark.slow
def test_an_unusable_resolution_falls_back_to_a_new_attempt(tmp_path: Path, fake_api: Any) -> None:
    fake_api.tool_answers = ScriptedToolAnswers({}, fallback=lambda _name, _request: {"hunks": []})
    root, spec = _shared_file_spec(tmp_path, fake_api)

    result = run_cli(["run", str(spec), "--jobs", "3", "--json"], cwd=root, fake=fake_api)

    assert result.code == 0, result.stderr
    conflicts = [e for e in result.events() if e["type"] == "merge" and e["result"] == "conflict"]
    assert conflicts and "not resolved by a focused step" in result.stderr
    assert max(_attempts(result.events()).values()) > 1
    for fid in {e["id"] for e in conflicts}:  # the conflict is the next attempt's Last Verification Result
        prompts = [r for r in fake_api.agent_requests(fid) if len(r.body["messages"]) == 1]
        assert "merge conflict" in json.dumps(prompts[-1].body["messages"][0]["content"])
    assert sorted((root / "shared.txt").read_text().splitlines()) == [f"line {i}" for i in range(1, 7)]
    # The aborted rebase left no work branch half rebased: nothing of the run is left behind.
    assert subprocess.run(["git", "worktree", "list"], cwd=root, capture_output=True, text=True).stdout.count("\n") == 1
