"""The combined branch's integration worktree, and the seam that applies one feature's work there.

The combine step never touches the user's working tree while it works: it cherry-picks each
feature's checkpoint commit (`orchestrate: <id>: <name>`) in a worktree of its own
(`.autonomous/worktrees/combine`, detached at the combined branch's tip), re-checks there, and
only then advances the branch by that one commit (fast-forward, where the branch is checked out;
otherwise the ref itself). A conflict or a failed check puts the worktree back as it was.

`CheckpointApplier` is the seam: the parallel workers' merge queue can take this one's place.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from orchestrator.combine.final_check import CheckSettings, run_checks
from orchestrator.errors import UsageError
from orchestrator.run.git_safety import CheckpointError, check_git, run_git, safe_config
from orchestrator.store.paths import ProjectPaths

MergeResult = Literal["merged", "conflict", "recheck_failed"]
_SUBJECT = re.compile(r"^orchestrate: (?P<id>[A-Za-z0-9._-]+): ")
_IDENTITY = {"user.name": "orchestrate", "user.email": "orchestrate@localhost"}
IMPORT_REFS = "refs/orchestrate/import"


@dataclass
class ApplyResult:
    """What applying one feature's checkpoint did (the `merge` event's `result`)."""

    feature_id: str
    result: MergeResult
    sha: str | None = None  # the combined branch's new commit when merged
    message: str = ""
    broken: list[str] = field(default_factory=list)  # features whose check failed after it


class CheckpointApplier(Protocol):
    """Apply one feature's checkpoint onto the combined branch and re-check it."""

    def apply(self, feature_id: str, commit: str | None, recheck: Sequence[tuple[str, str | None]]) -> ApplyResult: ...


def checkpoint_feature(subject: str) -> str | None:
    """The feature id of a checkpoint commit's subject, None for any other commit."""
    match = _SUBJECT.match(subject)
    return match.group("id") if match else None


class IntegrationTree:
    """A worktree detached at the combined branch's tip, where checkpoints are applied."""

    def __init__(self, root: Path, branch: str, worktree: Path, checks: CheckSettings) -> None:
        self.root, self.branch, self.worktree, self.checks = root, branch, worktree, checks
        self.safe = safe_config(root)

    @classmethod
    def open(cls, paths: ProjectPaths, branch: str, checks: CheckSettings) -> IntegrationTree:
        """The integration worktree of `branch` (created from HEAD when it does not exist)."""
        root = paths.root
        if run_git(root, "check-ref-format", "--branch", branch).returncode != 0:
            raise UsageError(f"--branch {branch!r} is not a valid git branch name")
        tree = cls(root, branch, paths.autonomous / "worktrees" / "combine", checks)
        try:
            if run_git(root, "show-ref", "--verify", "--quiet", f"refs/heads/{branch}").returncode != 0:
                check_git(root, "branch", branch, "HEAD")
            tree._reset_worktree()
        except CheckpointError as err:
            raise UsageError(f"cannot prepare the integration worktree of {branch}: {err}") from err
        return tree

    def _reset_worktree(self) -> None:
        check_git(self.root, *self.safe, "worktree", "prune")
        if not (self.worktree / ".git").exists():
            self.worktree.parent.mkdir(parents=True, exist_ok=True)
            check_git(self.root, *self.safe, "worktree", "add", "--quiet", "--detach", str(self.worktree), self.branch)
        self._git("checkout", "--quiet", "--force", "--detach", self.branch)
        self._git("clean", "-fdq")

    def _git(self, *args: str) -> str:
        return check_git(self.worktree, *self.safe, *args).stdout.strip()

    def tip(self) -> str:
        return check_git(self.root, "rev-parse", f"refs/heads/{self.branch}").stdout.strip()

    def fetch(self, bundle: Path, branch: str, slot: int) -> str:
        """Fetch `branch` from `bundle` into `refs/orchestrate/import/<slot>`; its commit."""
        ref = f"{IMPORT_REFS}/{slot}"
        check_git(self.root, *self.safe, "fetch", "--quiet", "--no-tags", str(bundle.resolve()), f"+refs/heads/{branch}:{ref}")
        return check_git(self.root, "rev-parse", ref).stdout.strip()

    def checkpoints(self, ref: str) -> dict[str, str]:
        """The checkpoint commits on `ref` that the combined branch does not have: feature id -> sha."""
        listed = self._git("log", "--reverse", "--format=%H %s", ref, "--not", f"refs/heads/{self.branch}", "--")
        found: dict[str, str] = {}
        for line in listed.splitlines():
            sha, _, subject = line.partition(" ")
            feature_id = checkpoint_feature(subject)
            if feature_id:
                found[feature_id] = sha  # a feature redone later: its newest checkpoint
        return found

    def combined(self) -> set[str]:
        """Features whose checkpoint is already on the combined branch (a re-run skips them)."""
        listed = self._git("log", "--format=%s", f"refs/heads/{self.branch}", "--")
        return {fid for line in listed.splitlines() if (fid := checkpoint_feature(line))}

    def apply(self, feature_id: str, commit: str | None, recheck: Sequence[tuple[str, str | None]]) -> ApplyResult:
        """Cherry-pick `commit` (None: the feature changed nothing), then run `recheck` (the
        feature's own check first, then those of the features combined before it)."""
        before = self.tip()
        if commit is not None:
            picked = run_git(self.worktree, *self.safe, *self._identity(), "cherry-pick", "--allow-empty",
                             "--keep-redundant-commits", commit)
            if picked.returncode != 0:
                self._back_to(before)
                detail = (picked.stderr or picked.stdout).strip().splitlines()
                return ApplyResult(feature_id, "conflict", message=detail[-1] if detail else "cherry-pick failed")
        results = run_checks(self.worktree, recheck, self.checks)
        broken = [fid for fid, _ in recheck if fid in results and not results[fid].success]
        if broken:
            self._back_to(before)
            return ApplyResult(feature_id, "recheck_failed", message=_broken_message(feature_id, broken), broken=broken)
        after = self._git("rev-parse", "HEAD")
        if after != before:
            self._advance(before, after)
        return ApplyResult(feature_id, "merged", sha=after)

    def _identity(self) -> list[str]:
        options: list[str] = []
        for key, fallback in _IDENTITY.items():
            if run_git(self.worktree, "config", "--get", key).returncode != 0:
                options += ["-c", f"{key}={fallback}"]
        return options

    def _back_to(self, commit: str) -> None:
        run_git(self.worktree, *self.safe, "cherry-pick", "--abort")
        self._git("reset", "--hard", "--quiet", commit)
        self._git("clean", "-fdq")

    def _advance(self, before: str, after: str) -> None:
        """Move the combined branch from `before` to `after`: fast-forward its checkout, if any."""
        checked_out = self._checked_out_in()
        if checked_out is None:
            check_git(self.root, "update-ref", f"refs/heads/{self.branch}", after, before)
        else:
            check_git(checked_out, *self.safe, "merge", "--ff-only", "--quiet", after)

    def _checked_out_in(self) -> Path | None:
        listed = check_git(self.root, "worktree", "list", "--porcelain").stdout
        current: Path | None = None
        for line in listed.splitlines():
            if line.startswith("worktree "):
                current = Path(line.removeprefix("worktree "))
            elif line == f"branch refs/heads/{self.branch}":
                return current
        return None


def _broken_message(feature_id: str, broken: list[str]) -> str:
    own = feature_id in broken
    others = [fid for fid in broken if fid != feature_id]
    parts = (["its own check fails on the combined tree"] if own else []) + (
        [f"it breaks the check of {', '.join(others)}"] if others else []
    )
    return f"{feature_id}: " + "; ".join(parts)
