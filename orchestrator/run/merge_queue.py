"""The merge queue of `--jobs N`: one feature at a time onto the user's branch, checked first.

A feature whose check passed in its worktree comes here. In the integration worktree, detached
at the user's branch head, its work branch is squash-merged; then the re-check runs on the
merged tree (by default the feature's own check; the run may plug in more, such as the checks
of features already passed). Clean: one checkpoint commit `orchestrate: <id>: <name>` is made
there and the user's branch (and checkout) moves forward to it, fast-forward. A conflict or a
failed re-check leaves the user's branch as it was and comes back as a failed verification,
for the feature's next attempt to act on.

Kill-safety: `before_commit` is told the head the checkpoint is made on before it is made, so a
resumed run can tell from the branch whether the merge happened (`find_checkpoint`).

`Landing` says where work lands and how it is brought in: by default (`SquashOntoHead`) the work
branch is squash-merged and the user's checked-out branch moves. `orchestrate combine` plugs in
its own (a shard's checkpoint commit, cherry-picked onto a branch that may not be checked out).
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from orchestrator.run.git_safety import check_git, git_error, run_git
from orchestrator.run.verify import VerificationResult
from orchestrator.run.worktrees import Worktrees, identity_options, work_branch
from orchestrator.spec.load import Feature

# What a merge conflict feeds back: enough hunks to act on, bounded like a check's output.
_CONFLICT_OUTPUT_LIMIT = 4000

Recheck = Callable[[Path, Feature, int], VerificationResult | None]
"""Re-check a merged tree (the integration worktree) for a feature: a failure, or None."""


@dataclass
class MergeOutcome:
    result: Literal["merged", "conflict", "recheck_failed"]
    base: str  # the user's branch head the merge was made on
    sha: str | None = None
    files: list[str] = field(default_factory=list)
    failure: VerificationResult | None = None


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


class MergeQueue:
    """Merges features onto the user's branch one at a time."""

    def __init__(
        self, worktrees: Worktrees, recheck: Recheck, should_stop: Callable[[], bool], landing: Landing | None = None
    ) -> None:
        self.worktrees = worktrees
        self.recheck = recheck
        self.should_stop = should_stop
        self.landing: Landing = landing or SquashOntoHead()
        self._turn = threading.Lock()

    def land(
        self, feature: Feature, attempt: int, command: str | None, before_commit: Callable[[str], None]
    ) -> MergeOutcome:
        """Merge `feature`'s work branch; wait for the queue. KeyboardInterrupt if the run stops meanwhile."""
        while not self._turn.acquire(timeout=0.2):
            if self.should_stop():
                raise KeyboardInterrupt("the run is stopping")
        try:
            if self.should_stop():
                raise KeyboardInterrupt("the run is stopping")
            return self._land(feature, attempt, command, before_commit)
        finally:
            self._turn.release()

    def _land(
        self, feature: Feature, attempt: int, command: str | None, before_commit: Callable[[str], None]
    ) -> MergeOutcome:
        trees = self.worktrees
        base = self.landing.base(trees)
        tree = trees.reset_integration(base)
        identity = identity_options(tree, trees.safe)  # a merge that is not a fast-forward wants one
        merged = self.landing.stage(tree, trees, identity, feature)
        if merged.returncode != 0:
            files, hunks = _conflicts(tree)
            if not files:  # not a conflict: git could not merge at all
                raise git_error("git merge --squash", merged)
            trees.reset_integration(base)
            listed = ", ".join(files)
            failure = VerificationResult(
                command=command, success=False, exit_code=None, attempt=attempt, output=hunks[-_CONFLICT_OUTPUT_LIMIT:],
                error=(f"merge conflict: this attempt's work does not merge onto the branch as it is now (other "
                       f"features were merged meanwhile); conflicting files: {listed}. The next attempt starts "
                       "from the current branch: redo the change on top of it"),
            )
            return MergeOutcome("conflict", base, files=files, failure=failure)
        rechecked = self.recheck(tree, feature, attempt)
        if rechecked is not None:
            trees.reset_integration(base)
            rechecked.error = ("after merging onto the current branch (with the features merged meanwhile) the check "
                               f"failed: {rechecked.error or 'exit ' + str(rechecked.exit_code)}")
            return MergeOutcome("recheck_failed", base, failure=rechecked)
        before_commit(base)
        message = f"orchestrate: {feature.id}: {feature.name}"
        check_git(tree, *trees.safe, *identity, "commit", "--quiet", "--no-verify",
                  "--allow-empty", "-m", message)
        sha = check_git(tree, "rev-parse", "HEAD").stdout.strip()
        self.landing.advance(trees, base, sha)
        return MergeOutcome("merged", base, sha=sha)


def _conflicts(tree: Path) -> tuple[list[str], str]:
    """The conflicting files and their hunks (with git's conflict markers), after a failed merge."""
    names = run_git(tree, "diff", "--name-only", "--diff-filter=U")
    files = [name for name in names.stdout.splitlines() if name]
    diff = run_git(tree, "diff", "--no-color", "--no-ext-diff", "--", *files) if files else None
    return files, diff.stdout if diff is not None else ""
