"""The merge queue's fast path: the features that waited for the queue, merged together.

While one feature is merged and re-checked, others finish and wait. One at a time, each would
pay for its own merge, re-check and fast-forward, and the last would wait for all of them (a
worker that waits is a worker not building). Here they go together, in the order they arrived:
each is squash-merged and committed on top of the one before (one checkpoint per feature, as
ever), then every batched feature's own check and the regression guard's checks for everything
the batch changed run once, several at once, on the tree with all of them; if all pass, the
user's branch fast-forwards over the whole batch.

Anything else (a conflict, a failing check, a stop) is not sorted out here: the batch is
dropped and its features are landed one at a time as before, which says exactly who conflicts
with what and whose change broke which check. A batch only ever saves time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from orchestrator.git.commit_filter import drop_refused
from orchestrator.git.run_git import check_git
from orchestrator.git.worktrees import Worktrees
from orchestrator.merge.landing import Landing
from orchestrator.spec.feature_spec import Feature

BatchRecheck = Callable[[Path, Sequence[tuple[Feature, int]], list[str]], bool]
"""Re-check a batch on its merged tree: the features with their attempts, and the files the batch
changed; True when every check passes."""


@dataclass
class Batched:
    """One feature of a batch that merged: its checkpoint commit and the commit it was made on."""

    feature: Feature
    attempt: int
    parent: str
    sha: str


def commit_staged(tree: Path, trees: Worktrees, identity: list[str], feature: Feature) -> str:
    """Commit what is staged in `tree` as `feature`'s checkpoint `orchestrate: <id>: <name>`; its sha.

    What `commit_filter` refuses is taken out first: a work branch (or a shard's commit) may hold
    it, the user's branch never does. The message goes through standard input (any length)."""
    drop_refused(trees.project_dir(tree), "HEAD", trees.safe)
    check_git(tree, *trees.safe, *identity, "commit", "--quiet", "--no-verify", "--allow-empty",
              "-F", "-", stdin=f"orchestrate: {feature.id}: {feature.name}")
    return check_git(tree, "rev-parse", "HEAD").stdout.strip()


def merge_batch(
    trees: Worktrees, landing: Landing, members: Sequence[tuple[Feature, int]], identity: list[str],
    recheck: BatchRecheck,
) -> tuple[str, list[Batched]] | None:
    """Merge and commit `members` in the integration worktree on the target branch's head, then
    re-check them all: the head they were merged on and one `Batched` each, or None (the batch is off)."""
    base = landing.base(trees)
    tree = trees.reset_integration(base)
    landed: list[Batched] = []
    for feature, attempt in members:
        merged = landing.stage(tree, trees, identity, feature)
        if merged.returncode != 0:
            return None
        parent = landed[-1].sha if landed else base
        landed.append(Batched(feature, attempt, parent, commit_staged(tree, trees, identity, feature)))
    project = trees.project_dir(tree)
    changed = check_git(project, "diff", "--name-only", "-z", "--relative", base, "HEAD").stdout.split("\0")
    if not recheck(project, members, [name for name in changed if name]):
        return None
    return base, landed

