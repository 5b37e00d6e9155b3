"""`--jobs N` in pieces: the shared spend pool, the journal with calls in flight at once, the
scheduler's picks, the merge queue on a real repository."""

from __future__ import annotations

import subprocess
from pathlib import Path

from orchestrator.git.worktrees import Worktrees, prepare_repository, work_branch
from orchestrator.merge.queue import MergeQueue
from orchestrator.spec.feature_spec import Feature


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def _feature(feature_id: str) -> Feature:
    return Feature.model_validate({"id": feature_id, "name": feature_id.upper(), "description": "d"})


def test_the_merge_queue_merges_one_checkpoint_or_reports_the_conflict(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    prepare_repository(root, lambda _m: None)
    trees = Worktrees(root, root / ".autonomous")
    queue = MergeQueue(trees, lambda _tree, _feature, _attempt: None, lambda: False)
    for fid in ("a", "b"):
        path = trees.create(fid)
        (path / "shared.txt").write_text(f"from {fid}\n")
        trees.commit_work(fid)
    bases: list[str] = []
    merged = queue.land(_feature("a"), 1, "true", bases.append)
    assert merged.result == "merged" and bases == [merged.base]
    assert _git(root, "log", "-1", "--format=%s").strip() == "orchestrate: a: A"
    assert (root / "shared.txt").read_text() == "from a\n"  # the user's checkout moved with the branch
    conflict = queue.land(_feature("b"), 1, "true", bases.append)
    assert conflict.result == "conflict" and conflict.files == ["shared.txt"]
    assert conflict.failure is not None and "<<<<<<<" in conflict.failure.output
    assert _git(root, "log", "-1", "--format=%s").strip() == "orchestrate: a: A"  # untouched
    assert _git(root, "status", "--porcelain").strip() == ""
    trees.prune_all()
    assert _git(root, "branch", "--list", work_branch("b")).strip() == ""


def test_a_failed_recheck_leaves_the_branch_alone(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    prepare_repository(root, lambda _m: None)
    trees = Worktrees(root, root / ".autonomous")
    from shared_base.check_result import CheckResult

    def failing(_tree: Path, _feature: Feature, attempt: int) -> CheckResult:
        return CheckResult(command="false", success=False, exit_code=1, attempt=attempt)

    queue = MergeQueue(trees, failing, lambda: False)
    (trees.create("a") / "x.txt").write_text("x\n")
    trees.commit_work("a")
    head = trees.head()
    outcome = queue.land(_feature("a"), 2, "false", lambda _base: None)
    assert outcome.result == "recheck_failed" and outcome.failure is not None
    assert "after merging" in (outcome.failure.error or "")
    assert trees.head() == head
    trees.prune_all()
