"""The combine step's parts: Context Agent stores merged, spend added once, checkpoint subjects, and
the merge queue landing a shard's checkpoint by cherry-pick."""

from __future__ import annotations

from pathlib import Path

from orchestrator.combine.integration import CherryPick, CombinedBranch
from orchestrator.git.checkpoint import exclude_run_state
from orchestrator.git.worktrees import Worktrees
from orchestrator.merge.queue import MergeQueue
from orchestrator.spec.feature_spec import Feature
from shared_base.check_result import CheckResult
from tests.git_helpers import git, init_repo, subjects


def _shard_commit(repo: Path, feature_id: str, files: dict[str, str], base: str = "main") -> str:
    """A checkpoint commit of `feature_id` on branch `shard`, made on `base`; its sha."""
    git(repo, "checkout", "-q", "-B", "shard", base)
    for name, text in files.items():
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", f"orchestrate: {feature_id}: Feature {feature_id}")
    sha = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "main")
    return sha


def _queue(repo: Path, recheck=lambda _tree, _feature, _attempt: None) -> tuple[MergeQueue, CherryPick]:
    exclude_run_state(repo)
    git(repo, "branch", "combined", "main")
    landing = CherryPick(CombinedBranch(repo, "combined"))
    return MergeQueue(Worktrees(repo, repo / ".autonomous"), recheck, lambda: False, landing), landing


def _feature(feature_id: str) -> Feature:
    return Feature(id=feature_id, name=f"Feature {feature_id}", description="x")


def test_the_merge_queue_cherry_picks_a_checkpoint_onto_a_branch_that_is_not_checked_out(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    queue, landing = _queue(repo)
    earlier = _shard_commit(repo, "f0", {"zero.txt": "0\n"})  # before f1 on the shard's branch: not dragged in
    landing.commits["f1"] = _shard_commit(repo, "f1", {"one.txt": "1\n"}, base=earlier)
    seen: list[str] = []

    outcome = queue.land(_feature("f1"), 1, None, before_commit=seen.append)

    assert outcome.result == "merged" and seen == [git(repo, "rev-parse", "main")]
    assert subjects(repo, "combined") == ["initial", "orchestrate: f1: Feature f1"]
    assert git(repo, "show", "--name-only", "--format=", "combined") == "one.txt"
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD") == "main" and not (repo / "one.txt").exists()
    assert git(repo, "status", "--porcelain") == ""


def test_a_checkpoint_that_conflicts_or_fails_its_recheck_leaves_the_branch_as_it_was(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    failing = CheckResult(command="false", success=False, exit_code=1, attempt=1, output="no")
    queue, landing = _queue(repo, recheck=lambda _tree, feature, _a: failing if feature.id == "bad" else None)
    git(repo, "checkout", "-q", "combined")
    (repo / "README.md").write_text("ours\n")
    git(repo, "commit", "-qam", "ours")
    git(repo, "checkout", "-q", "main")
    tip = git(repo, "rev-parse", "combined")
    landing.commits["clash"] = _shard_commit(repo, "clash", {"README.md": "theirs\n"})
    landing.commits["bad"] = _shard_commit(repo, "bad", {"bad.txt": "x\n"})

    clash = queue.land(_feature("clash"), 1, "true", before_commit=lambda _b: None)
    bad = queue.land(_feature("bad"), 2, "false", before_commit=lambda _b: None)

    assert (clash.result, clash.files) == ("conflict", ["README.md"])
    assert bad.result == "recheck_failed" and bad.failure is not None and bad.failure.exit_code == 1
    assert git(repo, "rev-parse", "combined") == tip


def test_a_checkpoint_touching_run_records_at_any_depth_or_adding_a_gitlink_is_found(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    branch = CombinedBranch(repo, "main")
    clean = _shard_commit(repo, "f1", {"one.txt": "1\n"})
    assert branch.run_records_in(clean) == []
    git(repo, "checkout", "-q", "shard")
    for path in ("app/.autonomous/state/combined.json", ".autonomous.bak-1/logs/f1.json"):
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text("{}\n")
    git(repo, "add", "-f", "app", ".autonomous.bak-1")
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{clean},vendor/lib")
    git(repo, "commit", "-q", "-m", "orchestrate: f2: Feature f2")

    found = branch.run_records_in(git(repo, "rev-parse", "HEAD"))

    assert sorted(found) == [".autonomous.bak-1/logs/f1.json", "app/.autonomous/state/combined.json", "vendor/lib"]
