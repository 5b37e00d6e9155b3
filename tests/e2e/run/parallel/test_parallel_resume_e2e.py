"""`--jobs N` killed inside the merge queue, at the two instants that matter, then resumed.

The worker records where the checkpoint will be made (`finishing`) before the merge commits; a
kill then leaves the user's branch either moved (the fast-forward happened) or not. The state
is put in exactly that shape after a finished run, so each instant is hit every time (the
random-instant kill is `test_parallel_e2e.py::test_kill_9_mid_run_then_resume_redoes_nothing_merged`).
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.run_state import PassToFinish
from orchestrator.store.state import StateStore
from tests.cli_helpers import run_cli, write_spec

IDS = ["feat-01", "feat-02", "feat-03"]


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def _checkpoints(root: Path) -> list[str]:
    return [s.split(": ")[1] for s in _git(root, "log", "--format=%s").splitlines() if s.startswith("orchestrate: ")
            and s.count(": ") >= 2]


def _killed_in_the_merge_queue(root: Path, feature_id: str, *, fast_forwarded: bool) -> None:
    """The state and branch as a kill -9 leaves them while `feature_id` (the newest checkpoint) merges."""
    assert _checkpoints(root)[0] == feature_id
    base = _git(root, "rev-parse", "HEAD~1").strip()
    if not fast_forwarded:
        _git(root, "reset", "--quiet", "--hard", base)
    store = StateStore(ProjectPaths.for_project(root))
    state = store.load()
    assert state is not None
    entry = state.feature(feature_id)
    entry.status, entry.completed_at, entry.attempts = "in_progress", None, entry.attempts - 1
    entry.finishing = PassToFinish(checkpoint_message=f"orchestrate: {feature_id}: Feature 3", checkpoint_base=base)
    store.save(state)


@pytest.mark.parametrize("fast_forwarded", [True, False], ids=["after-the-fast-forward", "before-the-fast-forward"])
def test_a_kill_in_the_merge_queue_resumes_with_one_checkpoint_per_feature(
    tmp_path: Path, fake_api: Any, fast_forwarded: bool
) -> None:
    spec = write_spec(tmp_path, 3, extra={"feat-03": {"depends_on": ["feat-01", "feat-02"]}})  # feat-03 merges last
    root = tmp_path / "project"
    first = run_cli(["run", str(spec), "-j", "2", "--project-dir", str(root)], cwd=tmp_path, fake=fake_api)
    assert first.code == 0, first.stderr[-2000:]
    _killed_in_the_merge_queue(root, "feat-03", fast_forwarded=fast_forwarded)
    calls_before = dict(fake_api.feature_calls)

    resumed = run_cli(["run", str(spec), "-j", "2", "--project-dir", str(root)], cwd=tmp_path, fake=fake_api)

    assert resumed.code == 0, resumed.stderr[-2000:]
    sent_again = fake_api.feature_calls["feat-03"] - calls_before["feat-03"]
    if fast_forwarded:
        assert sent_again == 0  # its checkpoint is on the branch: taken up, not redone
    else:
        assert sent_again > 0  # never merged: built again, from the branch as it is
    assert sorted(_checkpoints(root)) == IDS  # one checkpoint each, none twice
    state = StateStore(ProjectPaths.for_project(root)).load()
    assert state is not None
    assert {fid: state.feature(fid).status for fid in IDS} == dict.fromkeys(IDS, "passed")
    assert state.feature("feat-03").finishing is None
    assert _git(root, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert _git(root, "branch", "--list", "orchestrate/work/*").strip() == ""
