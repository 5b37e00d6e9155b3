"""The merge queue of `--jobs N`: one feature at a time onto the user's branch, checked first.

A feature whose check passed in its worktree comes here. In the integration worktree, detached
at the user's branch head, its work branch is squash-merged; then the re-check runs on the
merged tree (by default the feature's own check; the run may plug in more, such as the checks
of features already passed). Clean: one checkpoint commit `orchestrate: <id>: <name>` is made
there and the user's branch (and checkout) moves forward to it, fast-forward. A conflict or a
failed re-check leaves the user's branch as it was and comes back as a failed verification,
for the feature's next attempt to act on.

Features that wait for the queue while another is merged go together, when the run gives a
`recheck_batch` (`merge_batch`): one merge and one concurrent re-check for all of them, one at a
time again if that batch does not pass as a whole.

Kill-safety: `before_commit` is told the head the checkpoint is made on before it is made, so a
resumed run can tell from the branch whether the merge happened (`find_checkpoint`).

`Landing` says where work lands and how it is brought in: by default (`SquashOntoHead`) the work
branch is squash-merged and the user's checked-out branch moves. `orchestrate combine` plugs in
its own (a shard's checkpoint commit, cherry-picked onto a branch that may not be checked out).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from orchestrator.git.run_git import git_error, run_git
from orchestrator.git.tree import differing
from orchestrator.git.worktrees import Worktrees
from orchestrator.merge.batch import BatchRecheck, commit_staged, merge_batch
from orchestrator.merge.landing import Landing, SquashOntoHead
from orchestrator.spec.feature_spec import Feature
from orchestrator.store.agent_words import REDO_ON_TOP
from shared_base.check_result import CheckResult

# What a merge conflict feeds back: enough hunks to act on, bounded like a check's output.
_CONFLICT_OUTPUT_LIMIT = 4000

Recheck = Callable[[Path, Feature, int], CheckResult | None]
"""Re-check a merged tree (the integration worktree) for a feature: a failure, or None."""
Resolve = Callable[[list[str], str], str | None]
"""A feature's focused conflict step (`conflict_step`), given the conflicting files and the base
the merge met: a note saying how it was resolved, or None when it was not."""


@dataclass
class MergeOutcome:
    result: Literal["merged", "conflict", "recheck_failed"]
    base: str  # the user's branch head the merge was made on
    sha: str | None = None
    files: list[str] = field(default_factory=list)  # a conflict's files
    failure: CheckResult | None = None
    # Merged: the files its checkpoint changed, relative to the project (the feature's footprint;
    # its worktree cannot say once its work is committed there).
    changed: list[str] = field(default_factory=list)
    note: str | None = None  # how a conflict was resolved on the way


@dataclass(eq=False)  # found on the waiting list by identity
class _Landing:
    """A feature waiting for the queue, and what became of it."""

    feature: Feature
    attempt: int
    command: str | None
    before_commit: Callable[[str], None]
    resolve: Resolve | None = None
    outcome: MergeOutcome | None = None
    error: BaseException | None = None
    done: threading.Event = field(default_factory=threading.Event)

    def finish(self, outcome: MergeOutcome | None = None, error: BaseException | None = None) -> None:
        self.outcome, self.error = outcome, error
        self.done.set()


class MergeQueue:
    """Merges features onto the user's branch one at a time (or a waiting batch at once)."""

    def __init__(
        self, worktrees: Worktrees, recheck: Recheck, should_stop: Callable[[], bool],
        landing: Landing | None = None, recheck_batch: BatchRecheck | None = None,
    ) -> None:
        self.worktrees = worktrees
        self.recheck = recheck
        self.should_stop = should_stop
        self.landing: Landing = landing or SquashOntoHead(_say)
        self.recheck_batch = recheck_batch
        self._turn = threading.Lock()
        self._waiting: list[_Landing] = []
        self._waiting_lock = threading.Lock()

    @property
    def waiting(self) -> int:
        """How many features wait for their turn (not counting those being merged)."""
        with self._waiting_lock:
            return len(self._waiting)

    def land(
        self, feature: Feature, attempt: int, command: str | None, before_commit: Callable[[str], None],
        resolve: Resolve | None = None,
    ) -> MergeOutcome:
        """Merge `feature`'s work branch; wait for the queue. KeyboardInterrupt if the run stops meanwhile.
        `resolve`: the feature's conflict step, run during its turn (nothing merges meanwhile)."""
        landing = _Landing(feature, attempt, command, before_commit, resolve)
        with self._waiting_lock:
            self._waiting.append(landing)
        while not landing.done.is_set():
            if self._turn.acquire(blocking=False):
                try:
                    self._land_waiting()  # ours too, unless another's turn took it already
                finally:
                    self._turn.release()
            elif self.should_stop() and self._withdraw(landing):
                raise KeyboardInterrupt("the run is stopping")
            else:
                landing.done.wait(0.05)
        if landing.error is not None:
            raise landing.error
        assert landing.outcome is not None
        return landing.outcome

    def _withdraw(self, landing: _Landing) -> bool:
        """Take `landing` off the waiting list: False when a turn has taken it already (it lands)."""
        with self._waiting_lock:
            if landing in self._waiting:
                self._waiting.remove(landing)
                return True
            return False

    def _land_waiting(self) -> None:
        """Every feature waiting now: as one batch if they pass together, else one at a time."""
        with self._waiting_lock:
            batch, self._waiting = self._waiting, []
        try:
            if self.should_stop():
                raise KeyboardInterrupt("the run is stopping")
            if len(batch) > 1 and self.recheck_batch is not None and self._land_batch(batch):
                return
            for landing in batch:
                if self.should_stop():  # the rest are told, as each would have been at its own turn
                    raise KeyboardInterrupt("the run is stopping")
                landing.finish(self._land(landing))
        except BaseException as err:  # each waiting worker hears it, as if its own turn had failed
            for landing in batch:
                if not landing.done.is_set():
                    landing.finish(error=err)

    def _land_batch(self, batch: list[_Landing]) -> bool:
        """The batch merged, re-checked and fast-forwarded as one; False (nothing landed) if it did not pass."""
        assert self.recheck_batch is not None
        trees = self.worktrees
        members = [(landing.feature, landing.attempt) for landing in batch]
        merged = merge_batch(trees, self.landing, members, trees.identity, self.recheck_batch)
        if merged is None:
            return False
        base, landed = merged
        for landing in batch:
            landing.before_commit(base)  # the resumed run looks for each checkpoint after `base`
        self.landing.advance(trees, base, landed[-1].sha)
        project = trees.project_dir(trees.integration)
        for landing, done in zip(batch, landed, strict=True):
            changed = sorted(differing(project, done.parent, done.sha))
            landing.finish(MergeOutcome("merged", done.parent, sha=done.sha, changed=changed))
        return True

    def _land(self, landing: _Landing) -> MergeOutcome:
        feature, attempt, command = landing.feature, landing.attempt, landing.command
        trees = self.worktrees
        base = self.landing.base(trees)
        tree = trees.reset_integration(base)
        identity = trees.identity  # a merge that is not a fast-forward wants one
        project = trees.project_dir(tree)  # checks run, and files are named, as in the user's project
        merged = self.landing.stage(tree, trees, identity, feature)
        note = None
        if merged.returncode != 0:
            files, hunks = _conflicts(project)
            if not files:  # not a conflict: git could not merge at all
                raise git_error("git merge --squash", merged)
            trees.reset_integration(base)
            note = landing.resolve(files, base) if landing.resolve is not None else None
            if note is None or self.landing.stage(tree, trees, identity, feature).returncode != 0:
                trees.reset_integration(base)
                return _conflict(base, files, hunks, command, attempt)
        rechecked = self.recheck(project, feature, attempt)
        if rechecked is not None:
            trees.reset_integration(base)
            rechecked.error = ("after merging onto the current branch (with the features merged meanwhile) the check "
                               f"failed: {rechecked.error or 'exit ' + str(rechecked.exit_code)}")
            return MergeOutcome("recheck_failed", base, failure=rechecked, note=note)
        landing.before_commit(base)
        sha = commit_staged(tree, trees, identity, feature)
        self.landing.advance(trees, base, sha)
        return MergeOutcome("merged", base, sha=sha, changed=sorted(differing(project, base, sha)), note=note)


def _conflict(base: str, files: list[str], hunks: str, command: str | None, attempt: int) -> MergeOutcome:
    """A conflict that stays one: fed back to the next attempt with its hunks."""
    failure = CheckResult(
        command=command, success=False, exit_code=None, attempt=attempt, output=hunks[-_CONFLICT_OUTPUT_LIMIT:],
        refused_by="the merge queue (a merge conflict)",
        error=(f"merge conflict: this attempt's work does not merge onto the branch as it is now (other "
               f"features were merged meanwhile); conflicting files: {', '.join(files)}. {REDO_ON_TOP}"),
    )
    return MergeOutcome("conflict", base, files=files, failure=failure)


def _say(message: str) -> None:
    print(f"orchestrate: warning: {message}", file=sys.stderr)


def _conflicts(tree: Path) -> tuple[list[str], str]:
    """The conflicting files (relative to `tree`) and their hunks (with git's conflict markers), after a failed merge."""
    names = run_git(tree, "diff", "--name-only", "--relative", "--diff-filter=U")
    files = [name for name in names.stdout.splitlines() if name]
    diff = run_git(tree, "diff", "--no-color", "--no-ext-diff", "--relative", "--", *files) if files else None
    return files, diff.stdout if diff is not None else ""
