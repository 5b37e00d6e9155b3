"""The working tree as git sees it, without touching the user's staging area.

Everything here works through a private index (`GIT_INDEX_FILE`, a copy of the repository's
own with its time, so git need not hash every file again yet still compares by content what
changed in the second the index was written): `TreeSnapshot` records the project's files
(tracked and untracked, never the ignored ones, never `.autonomous/`) as a git tree object,
tells which of them changed since, and puts those back. The regression guard and final
verification use it so that a check which deletes or rewrites files loses nothing; failed
work is committed from it (`orchestrator.run.checks.failed_work`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from orchestrator.git.checkpoint import exclude_run_state
from orchestrator.git.commit_filter import EMPTY_TREE, drop_refused
from orchestrator.git.run_git import CheckpointError, check_git, run_git, safe_config
from orchestrator.store.disk.paths import FRESH_BACKUP_PREFIX, STATE_DIR_NAME


def is_ours(path: str) -> bool:
    """Whether `path` (relative to the project) is orchestrate's own: never project work."""
    top = path.split("/", 1)[0]
    return top == STATE_DIR_NAME or top.startswith(FRESH_BACKUP_PREFIX)


def split_z(text: str) -> list[str]:
    return [item for item in text.split("\0") if item]


class TreeSnapshot:
    """The project's files at one moment, as a git tree in a private index. Raises CheckpointError."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.safe = safe_config(root)
        exclude_run_state(root)  # `.autonomous/` is ignored, so `add --all` leaves it out
        handle, name = tempfile.mkstemp(prefix="orchestrate-index-")
        os.close(handle)
        self.index = Path(name)
        real = Path(check_git(root, "rev-parse", "--git-path", "index").stdout.strip())
        real = real if real.is_absolute() else root / real
        try:
            if real.is_file():
                shutil.copyfile(real, self.index)  # its stat data spares hashing unchanged files
                # ... and the index's own time with it: git trusts an entry's stat data only when
                # the entry is older than its index, so a copy stamped now would hide a same-size
                # edit made in the second the index was written (an editor's save after a commit).
                written = real.stat()
                os.utime(self.index, ns=(written.st_atime_ns, written.st_mtime_ns))
            else:
                self.index.unlink()
            check_git(root, *self.safe, "add", "--all", "--", ".", index_file=self.index)
            # Whatever the ignore files let through, the run's own files are never in it (the
            # user's `orchestrate.toml` is: a snapshot puts files back, it is no commit).
            drop_refused(root, head_or_empty(root), self.safe, index_file=self.index, config=False)
            self.tree = check_git(root, "write-tree", index_file=self.index).stdout.strip()
        except BaseException:
            self.close()
            raise

    def changed(self) -> list[str]:
        """Files of the snapshot modified or deleted since (files added since are not counted)."""
        run_git(self.root, *self.safe, "update-index", "-q", "--refresh", index_file=self.index)
        listed = check_git(
            self.root, *self.safe, "diff-files", "--name-only", "-z", "--relative", "--", ".", index_file=self.index
        )
        return [path for path in split_z(listed.stdout) if not is_ours(path)]

    def restore(self, paths: list[str]) -> None:
        """Put `paths` back as the snapshot holds them."""
        if paths:
            check_git(self.root, *self.safe, "checkout-index", "-f", "-q", "--", *paths, index_file=self.index)

    def close(self) -> None:
        self.index.unlink(missing_ok=True)

    def __enter__(self) -> TreeSnapshot:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def head_or_empty(root: Path) -> str:
    """HEAD's commit, or git's empty tree on a branch with no commit yet."""
    result = run_git(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    sha = result.stdout.strip()
    return sha if result.returncode == 0 and sha else EMPTY_TREE


def changed_since_head(root: Path) -> list[str]:
    """Project files that differ from HEAD: modified, deleted, or new and not ignored."""
    base = head_or_empty(root)
    diffed = check_git(root, "diff", "--no-ext-diff", "--name-only", "-z", "--relative", base, "--", ".")
    new = check_git(root, "ls-files", "-z", "--others", "--exclude-standard", "--", ".")
    return sorted({path for path in split_z(diffed.stdout) + split_z(new.stdout) if not is_ours(path)})


def differing(root: Path, first: str, second: str) -> set[str]:
    """Paths (relative to the project) whose content differs between two trees or commits."""
    try:
        listed = check_git(root, "diff-tree", "-r", "--name-only", "-z", "--relative", first, second, "--", ".")
    except CheckpointError:
        return set()
    return set(split_z(listed.stdout))


def diff_stat(root: Path, limit: int) -> tuple[list[str], int]:
    """What the tree holds beyond HEAD, one `path (+added -deleted)` or `path (new)` a line, at most
    `limit` of them, and how many there are in all. Raises CheckpointError."""
    safe = safe_config(root)
    numstat = check_git(root, *safe, "diff", "--no-ext-diff", "--numstat", "-z", "--relative", head_or_empty(root), "--", ".")
    lines: list[str] = []
    for record in split_z(numstat.stdout):
        added, _, rest = record.partition("\t")
        deleted, _, path = rest.partition("\t")
        if path and not is_ours(path):
            lines.append(f"{path} (binary)" if added == "-" else f"{path} (+{added} -{deleted})")
    new = check_git(root, *safe, "ls-files", "-z", "--others", "--exclude-standard", "--", ".")
    lines += [f"{path} (new)" for path in split_z(new.stdout) if not is_ours(path)]
    return lines[:limit], len(lines)
