"""The modes around the agent hold with the REAL bundled Claude Code as the agent: `--branch`
(checkpoints on the branch, the user's checkout untouched) and CI shards (`--shard`, `export`,
then `combine` in a fresh clone, verified), as they do for the built-in loop.

The fake's default plan (create `features/<id>.txt`, look at it, report) is said in Claude Code's
tools when the request offers them (`fake_api/claude_code_turns.py`).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fake_messages_api.server import FakeAPI
from tests.cli_helpers import read_json, run_cli, write_spec
from tests.git_helpers import clone, git, init_repo, subjects

pytest.importorskip(
    "claude_agent_sdk", reason="the claude-code extra is not installed: pip install 'orchestrate[claude-code]'"
)
pytestmark = [pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"), pytest.mark.slow]
RUN_TIMEOUT = 600.0  # a few Claude Code sessions on a loaded 2-core machine


def _all_calls_were_claude_code(fake: FakeAPI) -> None:
    calls = fake.agent_requests()
    assert calls, "the model was never asked"
    assert all(r.headers.get("user-agent", "").startswith("claude-cli/") for r in calls)


def test_branch_with_claude_code_checkpoints_on_the_branch_and_leaves_the_checkout_alone(
    fake_api: FakeAPI, tmp_path: Path,
) -> None:
    repo = init_repo(tmp_path / "repo")
    spec = write_spec(tmp_path, 2)
    before = git(repo, "rev-parse", "HEAD")

    result = run_cli(["run", str(spec), "--agent", "claude-code", "--branch", "work"], repo, fake_api,
                     timeout=RUN_TIMEOUT)

    assert result.code == 0, result.stderr[-3000:]
    _all_calls_were_claude_code(fake_api)
    assert git(repo, "rev-parse", "HEAD") == before
    assert git(repo, "status", "--porcelain") == ""
    assert not (repo / "features").exists()
    assert subjects(repo, "work") == ["initial", "orchestrate: feat-01: Feature 1", "orchestrate: feat-02: Feature 2"]
    committed = git(repo, "ls-tree", "-r", "--name-only", "work").splitlines()
    assert {"features/feat-01.txt", "features/feat-02.txt"} <= set(committed)
    assert not any(path.startswith((".autonomous", ".claude")) for path in committed)


def test_shards_run_by_claude_code_combine_into_one_verified_branch(fake_api: FakeAPI, tmp_path: Path) -> None:
    seed = init_repo(tmp_path / "seed")
    remote = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(seed), str(remote))
    spec = write_spec(tmp_path, 4)
    artifacts = []
    for index in (1, 2):
        runner = clone(remote, tmp_path / f"runner-{index}")
        ran = run_cli(["run", str(spec), "--agent", "claude-code", "--shard", f"{index}/2"], runner, fake_api,
                      timeout=RUN_TIMEOUT)
        assert ran.code == 0, ran.stderr[-3000:]
        artifact = tmp_path / "artifacts" / f"shard-{index}"
        exported = run_cli(["export", str(artifact)], runner, fake_api)
        assert exported.code == 0, exported.stderr
        artifacts.append(artifact)
    _all_calls_were_claude_code(fake_api)

    final = clone(remote, tmp_path / "final")
    combined = run_cli(["combine", str(spec), *map(str, artifacts)], final, fake_api, timeout=RUN_TIMEOUT)

    assert combined.code == 0, combined.stderr[-3000:]
    state = read_json(final / ".autonomous/state/execution-state.json")
    assert {fid: f["status"] for fid, f in state["features"].items()} == {
        f"feat-0{i}": "passed" for i in range(1, 5)
    }
    for index in range(1, 5):
        assert (final / "features" / f"feat-0{index}.txt").exists()
