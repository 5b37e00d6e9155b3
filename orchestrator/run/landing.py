"""Where the merge queue lands a feature's work, and how it brings the work in.

By default (`SquashOntoHead`) the work branch `orchestrate/work/<id>` is squash-merged and the
user's checked-out branch moves. `orchestrate combine` plugs in its own (a shard's checkpoint
commit, cherry-picked onto a branch that may not be checked out).
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Protocol

from orchestrator.run.git_safety import check_git, run_git
from orchestrator.run.worktrees import Worktrees, work_branch
from orchestrator.spec.load import Feature


class Landing(Protocol):
    """Where the queue lands a feature's work and how it brings the work in."""

    def base(self, trees: Worktrees) -> str:
        """The commit the target branch points at now (the merge is made on it)."""
        ...

    def stage(self, tree: Path, trees: Worktrees, identity: list[str], feature: Feature) -> subprocess.CompletedProcess[str]:
        """Bring `feature`'s work into `tree`'s index without committing; git's result."""
        ...

    def advance(self, trees: Worktrees, base: str, sha: str) -> None:
        """Move the target branch from `base` to `sha` (a fast-forward)."""
        ...


class SquashOntoHead:
    """The parallel run's landing: `orchestrate/work/<id>` squash-merged onto the user's checked-out branch."""

    def base(self, trees: Worktrees) -> str:
        return trees.head()

    def stage(self, tree: Path, trees: Worktrees, identity: list[str], feature: Feature) -> subprocess.CompletedProcess[str]:
        return run_git(tree, *trees.safe, *identity, "merge", "--squash", "--quiet", work_branch(feature.id))

    def advance(self, trees: Worktrees, base: str, sha: str) -> None:
        # The user's branch and checkout move to it; fast-forward only, so nothing is ever half-merged there.
        check_git(trees.root, *trees.safe, "merge", "--ff-only", "--quiet", sha)
