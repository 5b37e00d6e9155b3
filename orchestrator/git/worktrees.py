"""Git worktrees for `--jobs N`: one per feature at work, plus the merge queue's integration tree.

A feature works in `.autonomous/worktrees/<id>` on branch `orchestrate/work/<id>`, made from
the user's branch as it is when the feature (or its next attempt after a failed merge) starts.
An ended feature's tree is kept as a spare (`.autonomous/worktrees/.spare-*`) and becomes the next
feature's: checked out at the head and cleaned of every file git does not track, so it costs
the files that differ, not the whole project, and carries nothing over.
The merge queue applies work in the integration tree, a detached worktree in a private
directory outside the project (its owner gives the path), so nothing is ever half-applied to
the user's checkout. The feature trees live under `.autonomous/`, which git ignores and
checkpoints never commit; a run removes what it made when it ends, and prunes what a killed
run left at its start.

Each tree (a feature's and the integration tree) carries in the project's ignored files that no
run made or changed, as final verification's checkout does (`carried_files`, the one mechanism:
an editable install's egg-info, a generated `_version.py`, a compiled extension), copied, never
bytecode: a check that passes in the user's tree passes in a worker's too. Nothing of it is
committed (git ignores it there as in the project), and a renewed or reset tree is cleaned of it
and given it again, so a change a feature made to it is never handed on.

A project that is a directory of a bigger repository (a monorepo) works too: each worktree holds
the whole repository, and the feature works and is checked in the project's directory inside it
(`project_dir`).

Git runs here as checkpoints do (`git_safety`): no hooks, no repository-config programs.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Callable
from pathlib import Path

from orchestrator.git import checkpoint as git_checkpoint
from orchestrator.git.carried_files import RUN_TIMES_NAME, Carried, RunTimes, carry_ignored
from orchestrator.git.commit_filter import REFUSED_PATHSPECS, drop_refused
from orchestrator.git.repository_guard import mark_repository
from orchestrator.git.run_git import CheckpointError, check_git, run_git, safe_config
from orchestrator.git.tree import split_z
from orchestrator.store.disk.atomic import refuse_links, remove_no_follow
from orchestrator.user_errors import UsageError

WORK_BRANCH_PREFIX = "orchestrate/work/"
_START_MESSAGE = "orchestrate: the project as it was before the run"
SPARE_PREFIX = ".spare-"  # an ended feature's tree, kept for the next one (`Worktrees.remove`)
MAX_SPARES = 16
_IDENTITY = {"user.name": "orchestrate", "user.email": "orchestrate@localhost"}


def work_branch(feature_id: str) -> str:
    return WORK_BRANCH_PREFIX + feature_id


def identity_options(root: Path, safe: list[str]) -> list[str]:
    """`-c user.name=...` for a repository where git has no identity, so a commit never fails for it."""
    options: list[str] = []
    for key, fallback in _IDENTITY.items():
        if run_git(root, *safe, "config", "--get", key).returncode != 0:
            options += ["-c", f"{key}={fallback}"]
    return options


class Worktrees:
    """The worktrees and work branches of one project's parallel run."""

    def __init__(self, root: Path, state_dir: Path, *, integration: Path | None = None) -> None:
        """`integration`: where the merge queue's tree goes (default `.autonomous/integration`;
        `combine` puts it in a private directory outside the project)."""
        self.root = root
        self.base = state_dir / "worktrees"
        self.integration = integration or state_dir / "integration"
        self.run_times = state_dir / "state" / RUN_TIMES_NAME  # `ProjectPaths.run_times`
        self._safe: list[str] | None = None
        self._identity: list[str] | None = None
        self._prefix: str | None = None
        self._top: Path | None = None
        self._admin: Path | None = None
        # Workers add and remove worktrees at once; git's worktree bookkeeping is not made for that
        # (a prune while another add is half done deletes it).
        self._lock = threading.RLock()

    @property
    def safe(self) -> list[str]:
        if self._safe is None:
            self._safe = safe_config(self.root)
        return self._safe

    @property
    def identity(self) -> list[str]:
        """`identity_options` for the repository, looked up once: its worktrees share its config."""
        if self._identity is None:
            self._identity = identity_options(self.root, self.safe)
        return self._identity

    @property
    def prefix(self) -> str:
        """Where the project is in its repository ("services/widget/"; "" at the top)."""
        if self._prefix is None:
            self._prefix = check_git(self.root, "rev-parse", "--show-prefix").stdout.strip()
        return self._prefix

    @property
    def top(self) -> Path:
        """The top level of the live repository (`root` unless the project is a directory of a
        bigger one): what the integration tree, the whole repository, stands in for in the sandbox."""
        if self._top is None:
            self._top = Path(check_git(self.root, "rev-parse", "--show-toplevel").stdout.strip())
        return self._top

    def path(self, feature_id: str) -> Path:
        """The feature's worktree: the whole repository."""
        return self.base / feature_id

    def project_dir(self, tree: Path) -> Path:
        """The project's directory in a worktree (`tree` itself unless the project is a directory
        of a bigger repository): where features work and checks run."""
        return tree / self.prefix if self.prefix else tree

    def workspace(self, feature_id: str) -> Path:
        return self.project_dir(self.path(feature_id))

    def head(self) -> str:
        """The commit the user's branch points at now."""
        return check_git(self.root, "rev-parse", "--verify", "HEAD^{commit}").stdout.strip()

    def create(self, feature_id: str) -> Path:
        """A fresh worktree for `feature_id` on its work branch, made from the user's branch head.

        A spare tree an ended feature left (`remove`) is taken when there is one: checking it out
        at the head writes only the files that differ, where `worktree add` writes every file of
        the project, which made each feature of a long `--jobs` run dearer than the one before."""
        with self._lock:
            path = self.path(feature_id)
            self._remove_tree(path)  # an earlier attempt's; `-B` below resets its branch
            self.base.mkdir(parents=True, exist_ok=True)
            spare = self._take_spare(path)
        if not (spare and self._renew(path, feature_id)):
            with self._lock:
                self._remove_tree(path)
                # HEAD is resolved in the user's checkout (`self.root`): the user's branch head.
                check_git(self.root, *self.safe, "worktree", "add", "--quiet", "--force", "-B",
                          work_branch(feature_id), str(path), "HEAD")
        self.carry_in(path)
        return path

    def carry_in(self, tree: Path) -> Carried:
        """The project's ignored files that no run made or changed, copied into `tree`'s project
        directory (`carried_files`; never bytecode, never `.autonomous/`). One that the tree's own
        ignore rules do not ignore (a `.gitignore` line not committed) is taken out again: the
        feature's commit would take it in, and it is no file of the project's history."""
        project = self.project_dir(tree)
        carried = carry_ignored(self.root, project, RunTimes.load(self.run_times))
        if carried.copied:
            listed = check_git(project, "ls-files", "-z", "--others", "--exclude-standard", "--", ".").stdout
            for name in split_z(listed):  # the tree was clean: all of them are carried files
                remove_no_follow(project / name)
                carried.leave_out(name, "not ignored in the commit")
        return carried

    def commit_work(self, feature_id: str) -> None:
        """Commit what the agent changed in its worktree onto its work branch (an empty commit if nothing).

        Few git commands, not a checkpoint's nine: the worktree is new, so no stale lock can be in
        it. What `commit_filter` refuses (a `.autonomous/` the agent made there, ...) stays out of
        the work branch, whatever the ignore files say: nothing of it reaches the user's branch."""
        path = self.path(feature_id)
        check_git(path, *self.safe, "add", "--all", "--", ".")
        drop_refused(self.project_dir(path), "HEAD", self.safe)
        check_git(path, *self.safe, *self.identity, "commit", "--quiet", "--no-verify", "--allow-empty",
                  "-m", f"orchestrate work: {feature_id}")

    def remove(self, feature_id: str) -> None:
        """The feature's worktree and work branch, gone (quietly, if they were not there); the tree
        is kept as a spare for the next feature when it can be (`create` cleans it)."""
        path = self.path(feature_id)
        if not self._keep_as_spare(path):
            with self._lock:
                self._remove_tree(path)
        run_git(self.root, "branch", "--quiet", "-D", work_branch(feature_id))  # a ref: no worktree bookkeeping

    def _keep_as_spare(self, path: Path) -> bool:
        """Park an ended feature's tree, detached (its branch can go), under a spare's name."""
        if not self._is_our_worktree(path):
            return False
        with self._lock:
            if len(self._spares()) >= MAX_SPARES:
                return False
        if run_git(path, *self.safe, "checkout", "--quiet", "--detach").returncode != 0:
            return False
        with self._lock:
            spare = self.base / f"{SPARE_PREFIX}{uuid.uuid4().hex[:12]}"
            return run_git(self.root, *self.safe, "worktree", "move", str(path), str(spare)).returncode == 0

    def _take_spare(self, path: Path) -> bool:
        """Move a spare tree to `path` (under the lock); False when there is none to take."""
        for spare in self._spares():
            if run_git(self.root, *self.safe, "worktree", "move", str(spare), str(path)).returncode == 0:
                return True
            self._remove_tree(spare)
        return False

    def _renew(self, path: Path, feature_id: str) -> bool:
        """A spare at `path`, checked out on the feature's branch at the user's head, with nothing
        of the feature before it left (every untracked, ignored and nested-repository file goes);
        False, to start over with a new tree, if any of it fails or the tree is not ours."""
        if not self._is_our_worktree(path):
            return False
        steps = (("checkout", "--quiet", "--force", "-B", work_branch(feature_id), self.head()),
                 ("clean", "-q", "-f", "-f", "-d", "-x"))
        return all(run_git(path, *self.safe, *step).returncode == 0 for step in steps)

    def _spares(self) -> list[Path]:
        return sorted(self.base.glob(SPARE_PREFIX + "*")) if self.base.is_dir() else []

    def _is_our_worktree(self, path: Path) -> bool:
        """`path` is a worktree of this repository: its `.git` a plain file naming our worktree
        bookkeeping (an agent's command could have replaced it to point git elsewhere)."""
        marker = path / ".git"
        if marker.is_symlink() or not marker.is_file():
            return False
        try:
            text = marker.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            return False
        if not text.startswith("gitdir: "):
            return False
        gitdir = Path(text.removeprefix("gitdir: "))
        if gitdir.parent != self._worktrees_admin():
            return False
        try:  # and that bookkeeping names this tree back (not another worker's)
            return Path((gitdir / "gitdir").read_text(encoding="utf-8").strip()) == marker.absolute()
        except (OSError, UnicodeDecodeError):
            return False

    def _worktrees_admin(self) -> Path:
        """The repository's `worktrees/` bookkeeping directory."""
        if self._admin is None:
            common = check_git(self.root, "rev-parse", "--path-format=absolute", "--git-common-dir").stdout.strip()
            self._admin = Path(common) / "worktrees"
        return self._admin

    def reset_integration(self, commit: str, *, carry: bool = True) -> Path:
        """The integration worktree, clean, detached at `commit`, with the carried ignored files
        (`carry_in`; `carry=False`: without them, for a caller that carries them in itself)."""
        path = self.integration
        if not os.path.lexists(path / ".git"):
            with self._lock:
                self._remove_tree(path)
                check_git(self.root, *self.safe, "worktree", "add", "--quiet", "--force", "--detach", str(path), commit)
        else:
            check_git(path, *self.safe, "reset", "--quiet", "--hard", commit)
            check_git(path, *self.safe, "clean", "-q", "-f", "-d", "-x")
        if carry:
            self.carry_in(path)
        return path

    def remove_integration(self) -> None:
        """The integration worktree and git's record of it, gone (quietly, if it was not there)."""
        with self._lock:
            self._remove_tree(self.integration)

    def prune_all(self) -> None:
        """Every worktree and `orchestrate/work/*` branch of this or a killed run, gone."""
        with self._lock:
            refuse_links(self.base)  # a link here (a cloned one, say) would lead the removals out of the project
            if self.base.is_dir():
                for entry in sorted(self.base.iterdir()):
                    self._remove_tree(entry)
            self._remove_tree(self.integration)
            run_git(self.root, "worktree", "prune")
            listed = run_git(self.root, "for-each-ref", "--format=%(refname:short)", "refs/heads/" + WORK_BRANCH_PREFIX)
            for branch in listed.stdout.split():
                run_git(self.root, "branch", "--quiet", "-D", branch)

    def _remove_tree(self, path: Path) -> None:
        """The worktree at `path` gone; a link there is removed as the link, nothing through it."""
        refuse_links(path.parent)
        if not path.is_symlink() and os.path.lexists(path / ".git"):
            run_git(self.root, "worktree", "remove", "--force", "--force", str(path))
        if remove_no_follow(path):
            run_git(self.root, "worktree", "prune")  # the bookkeeping of a tree removed by hand


def prepare_repository(root: Path, on_warning: Callable[[str], None]) -> None:
    """Make `root` a git repository `--jobs N` can work in, or raise UsageError saying why not.

    A new or empty directory is initialised; a repository without a commit, or with changes not
    committed in the project, gets one commit of that (worktrees are made from commits: work not
    committed would be invisible to every worker). Any other directory is left alone.
    """
    try:
        if not git_checkpoint.is_git_repo(root):
            if any(not entry.name.startswith(".autonomous") for entry in root.iterdir()):
                raise UsageError(
                    f"--jobs needs a git repository: {root} is not one, and it is not empty. Run `git init` there "
                    "and commit the project (or run without --jobs)"
                )
            check_git(root, "init", "--quiet")
            mark_repository(root, present=True)  # the program's own `git init`, not an agent's
            on_warning(f"--jobs: {root} was not a git repository; `git init` made it one (worktrees and checkpoints need it)")
        git_checkpoint.exclude_run_state(root)
        _commit_start(root, on_warning)
    except CheckpointError as err:
        raise UsageError(f"--jobs: could not prepare the git repository: {err}") from err


def _commit_start(root: Path, on_warning: Callable[[str], None]) -> None:
    """The project's uncommitted changes, committed (only the project's: in a bigger repository,
    what is staged or changed elsewhere stays as it is)."""
    safe = safe_config(root)
    no_commit = git_checkpoint.head_commit(root) is None
    inside = check_git(root, "rev-parse", "--show-prefix").stdout.strip() != ""
    # A commit limited to paths takes their working-tree content: the refused ones are left out.
    only_here = ["--", ".", *REFUSED_PATHSPECS] if inside else []
    check_git(root, *safe, "add", "--all", "--", ".")
    # The run's own files (events.jsonl, journal.jsonl, run.lock, worktrees as gitlinks) stay out,
    # whatever a `.gitignore` an earlier feature committed says (`commit_filter`).
    drop_refused(root, None if no_commit else "HEAD", safe)
    staged = run_git(root, *safe, "diff", "--cached", "--quiet", "--no-ext-diff", "--no-textconv", *only_here)
    if staged.returncode == 0 and not no_commit:
        return
    if staged.returncode not in (0, 1):
        raise CheckpointError(f"git diff --cached failed: {staged.stderr.strip()}")
    if staged.returncode == 1:
        on_warning("--jobs: the project's uncommitted changes were committed first, so that every worker sees them")
    check_git(root, *safe, *identity_options(root, safe), "commit", "--quiet", "--no-verify", "--allow-empty",
              "-m", _START_MESSAGE, *only_here)
