"""The combined branch: its git bookkeeping, and how a shard's checkpoint lands on it.

`CombinedBranch` fetches each artifact's bundle into `refs/orchestrate/import/<n>`, finds the
checkpoint commits (`orchestrate: <id>: <name>`) there and on the branch (a re-run skips what is
on it already). `CherryPick` is the parallel workers' merge queue's `Landing` for the combine
step: in the queue's integration worktree the feature's checkpoint commit is cherry-picked
without committing (a squash merge of the shard's branch would drag in its earlier commits,
which may not be combined), the queue re-checks and commits, and the branch moves by that one
commit: fast-forward where the branch is checked out, otherwise the ref itself (compare-and-swap).
The user's checkout of another branch is never touched.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path, PurePosixPath

from orchestrator.git.run_git import CheckpointError, check_git, git_error, run_git, safe_config
from orchestrator.git.worktrees import Worktrees
from orchestrator.spec.feature_spec import Feature
from orchestrator.store.disk.paths import STATE_DIR_NAME, ProjectPaths
from orchestrator.user_errors import UsageError

_SUBJECT = re.compile(r"^orchestrate: (?P<id>[A-Za-z0-9._-]+): ")
IMPORT_REFS = "refs/orchestrate/import"
GITLINK_MODE = "160000"


def checkpoint_feature(subject: str) -> str | None:
    """The feature id of a checkpoint commit's subject, None for any other commit."""
    match = _SUBJECT.match(subject)
    return match.group("id") if match else None


class CombinedBranch:
    """The branch the shards' work is combined onto, in the repository at `root`."""

    def __init__(self, root: Path, branch: str) -> None:
        self.root, self.branch = root, branch
        self.safe = safe_config(root)

    @classmethod
    def open(cls, paths: ProjectPaths, branch: str) -> CombinedBranch:
        """`branch` of the project (created from HEAD when it does not exist)."""
        root = paths.root
        if run_git(root, "check-ref-format", "--branch", branch).returncode != 0:
            raise UsageError(f"--branch {branch!r} is not a valid git branch name")
        try:
            if run_git(root, "show-ref", "--verify", "--quiet", f"refs/heads/{branch}").returncode != 0:
                check_git(root, "branch", branch, "HEAD")
        except CheckpointError as err:
            raise UsageError(f"cannot create the branch {branch} to combine onto: {err}") from err
        return cls(root, branch)

    def _git(self, *args: str) -> str:
        return check_git(self.root, *self.safe, *args).stdout.strip()

    def tip(self) -> str:
        return self._git("rev-parse", f"refs/heads/{self.branch}")

    def fetch(self, bundle: Path, branch: str, slot: int) -> str:
        """Fetch `branch` from `bundle` into `refs/orchestrate/import/<slot>`; its commit."""
        ref = f"{IMPORT_REFS}/{slot}"
        self._git("fetch", "--quiet", "--no-tags", str(bundle.resolve()), f"+refs/heads/{branch}:{ref}")
        return self._git("rev-parse", ref)

    def is_branch_name(self, name: str) -> bool:
        """Whether `name` is a valid branch name (an artifact's manifest is untrusted input)."""
        return bool(name) and run_git(self.root, "check-ref-format", "--branch", name).returncode == 0

    def drop_imports(self) -> None:
        """Delete the refs `fetch` made: a refused artifact's commits are not kept reachable."""
        listed = self._git("for-each-ref", "--format=%(refname)", IMPORT_REFS)
        for ref in listed.splitlines():
            self._git("update-ref", "-d", ref)

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

    def run_records_in(self, commit: str) -> list[str]:
        """The paths `commit` changes that are a project's run records (`.autonomous/`, its
        `--fresh` backups, at any depth: a project may be a subdirectory) or a gitlink: what a
        checkpoint never holds, whatever a shard's branch was amended to."""
        listed = self._git("diff-tree", "-r", "--root", "--no-commit-id", "--no-renames", "-z", commit)
        fields = listed.split("\0")
        found: list[str] = []
        # -z --raw: ":<mode> <mode> <sha> <sha> <status>" then the path, each NUL-terminated.
        for meta, path in zip(fields[0::2], fields[1::2], strict=False):
            gitlink = meta.split(" ")[1:2] == [GITLINK_MODE]  # the mode it lands with
            if gitlink or any(part.startswith(STATE_DIR_NAME) for part in PurePosixPath(path).parts):
                found.append(path)
        return found

    def combined(self) -> set[str]:
        """Features whose checkpoint is already on the combined branch (a re-run skips them)."""
        listed = self._git("log", "--format=%s", f"refs/heads/{self.branch}", "--")
        return {fid for line in listed.splitlines() if (fid := checkpoint_feature(line))}

    def checked_out_in(self) -> Path | None:
        """The worktree where the branch is checked out, if any."""
        listed = self._git("worktree", "list", "--porcelain")
        current: Path | None = None
        for line in listed.splitlines():
            if line.startswith("worktree "):
                current = Path(line.removeprefix("worktree "))
            elif line == f"branch refs/heads/{self.branch}":
                return current
        return None


class CherryPick:
    """The merge queue's `Landing` for the combine step (see the module's docstring).

    `commits` says which commit brings each feature's work (None: the feature changed nothing)."""

    def __init__(self, branch: CombinedBranch) -> None:
        self.branch = branch
        self.commits: dict[str, str | None] = {}

    def base(self, trees: Worktrees) -> str:
        return self.branch.tip()

    def stage(self, tree: Path, trees: Worktrees, identity: list[str], feature: Feature) -> subprocess.CompletedProcess[str]:
        commit = self.commits.get(feature.id)
        if commit is None:
            return subprocess.CompletedProcess(["git", "cherry-pick"], 0, "", "")
        picked = run_git(tree, *trees.safe, *identity, "cherry-pick", "--no-commit", commit)
        if picked.returncode != 0 and not run_git(tree, "diff", "--name-only", "--diff-filter=U").stdout.strip():
            raise git_error(f"git cherry-pick of {feature.id}'s checkpoint {commit[:12]}", picked)
        return picked

    def advance(self, trees: Worktrees, base: str, sha: str) -> None:
        checkout = self.branch.checked_out_in()
        if checkout is None:
            check_git(trees.root, "update-ref", f"refs/heads/{self.branch.branch}", sha, base)
        else:
            check_git(checkout, *trees.safe, "merge", "--ff-only", "--quiet", sha)
