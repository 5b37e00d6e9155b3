"""Where the merge queue lands a feature's work, and how it brings the work in.

By default (`SquashOntoHead`) the work branch `orchestrate/work/<id>` is squash-merged and the
user's checked-out branch moves. `orchestrate combine` plugs in its own (a shard's checkpoint
commit, cherry-picked onto a branch that may not be checked out).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from orchestrator.git.run_git import check_git, run_git
from orchestrator.git.worktrees import Worktrees, work_branch
from orchestrator.merge.user_edits import edits_in_the_way, put_back, set_aside
from orchestrator.spec.feature_spec import Feature


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
    """The parallel run's landing: `orchestrate/work/<id>` squash-merged onto the user's checked-out branch.

    A file the user edited in their checkout meanwhile, which the merge changes too, keeps the
    user's version in the working tree (`user_edits`); `on_warning` says so."""

    def __init__(self, on_warning: Callable[[str], None]) -> None:
        self.on_warning = on_warning

    def base(self, trees: Worktrees) -> str:
        return trees.head()

    def stage(self, tree: Path, trees: Worktrees, identity: list[str], feature: Feature) -> subprocess.CompletedProcess[str]:
        return run_git(tree, *trees.safe, *identity, "merge", "--squash", "--quiet", work_branch(feature.id))

    def advance(self, trees: Worktrees, base: str, sha: str) -> None:
        # The user's branch and checkout move to it; fast-forward only, so nothing is ever half-merged there.
        top = Path(check_git(trees.root, "rev-parse", "--show-toplevel").stdout.strip())
        in_the_way = edits_in_the_way(top, trees.safe, base, sha)
        if not in_the_way:
            check_git(trees.root, *trees.safe, "merge", "--ff-only", "--quiet", sha)
            return
        kept = set_aside(top, trees.safe, base, in_the_way, trees.base.parent, sha)
        check_git(trees.root, *trees.safe, "merge", "--ff-only", "--quiet", sha)
        put_back(top, kept)
        listed = ", ".join(in_the_way[:10]) + (f" and {len(in_the_way) - 10} more" if len(in_the_way) > 10 else "")
        self.on_warning(
            f"you changed {listed} while the run merged {sha[:12]} onto your branch, which changes them too: your "
            f"version is kept in the working tree (a copy is in {kept.copies}); the branch has the feature's "
            "(`git diff` shows yours on top of it)"
        )
