"""What orchestrate's own commits may hold: an explicit filter on paths, not the ignore files.

Every commit orchestrate makes (a checkpoint, a parallel worker's work, the merge queue's
checkpoint, the "project as it was before the run" commit, failed work) stages the project
with `git add --all` and then passes its index through `drop_refused`, which puts back every
staged change the filter refuses, whatever `.gitignore` says (a negation such as
`!.autonomous/` outranks `.git/info/exclude`):

- the run's state `.autonomous/` and the `--fresh` backups `.autonomous.bak-*` (relative to the
  project): nothing a worktree holds may reach the user's state through a merge;
- `orchestrate.toml` at the project's top: the run's configuration is the user's to commit;
- a new gitlink (a nested repository, such as a worktree, added as a submodule entry).

A refused path keeps the content the base commit has (or stays out when the base lacks it).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from orchestrator.git.run_git import check_git
from orchestrator.store.disk.paths import FRESH_BACKUP_PREFIX, STATE_DIR_NAME

CONFIG_FILE = "orchestrate.toml"
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's well-known empty tree
_GITLINK = "160000"
_NO_ENTRY = "000000"
_ZERO_SHA = "0" * 40
# Pathspecs for a `git commit -- <paths>` that takes working-tree content: the refused paths
# that may be tracked stay as the base has them.
REFUSED_PATHSPECS = (
    f":(exclude,literal){STATE_DIR_NAME}",
    f":(exclude){FRESH_BACKUP_PREFIX}*",  # not glob magic: its `*` would stop at a `/`
    f":(exclude,literal){CONFIG_FILE}",
)


def refused(path: str, *, config: bool = True) -> bool:
    """Whether `path` (relative to the project) is one orchestrate never commits (`config` False:
    `orchestrate.toml` is not refused, for a snapshot that only records the tree)."""
    top = path.split("/", 1)[0]
    return top == STATE_DIR_NAME or top.startswith(FRESH_BACKUP_PREFIX) or (config and path == CONFIG_FILE)


@dataclass(frozen=True)
class _Staged:
    old_mode: str
    new_mode: str
    old_sha: str
    path: str  # from the repository's top


def drop_refused(
    project: Path, base: str | None, safe: list[str], *, index_file: Path | None = None, config: bool = True
) -> list[str]:
    """Put back every staged change in `project`'s index (or `index_file`) that `refused` or a
    new gitlink is, as `base` (a commit or tree; None: none) has it. The dropped paths, relative
    to the project. `config` as for `refused`. Raises CheckpointError."""
    top = Path(check_git(project, "rev-parse", "--show-toplevel").stdout.strip())
    prefix = check_git(project, "rev-parse", "--show-prefix").stdout.strip()
    listed = check_git(
        top, *safe, "diff-index", "--cached", "--raw", "-z", "--no-renames", "--no-ext-diff", base or EMPTY_TREE,
        "--", prefix or ".", index_file=index_file,
    )
    dropped = [entry for entry in _parse_raw(listed.stdout) if _refuse(entry, prefix, config)]
    if not dropped:
        return []
    lines = "".join(
        f"0 {_ZERO_SHA}\t{entry.path}\0" if entry.old_mode == _NO_ENTRY else f"{entry.old_mode} {entry.old_sha}\t{entry.path}\0"
        for entry in dropped
    )
    check_git(top, *safe, "update-index", "-z", "--index-info", index_file=index_file, stdin=lines)
    return sorted(entry.path.removeprefix(prefix) for entry in dropped)


def _refuse(entry: _Staged, prefix: str, config: bool) -> bool:
    if not entry.path.startswith(prefix):
        return False
    new_gitlink = entry.new_mode == _GITLINK and entry.old_mode != _GITLINK
    return new_gitlink or refused(entry.path.removeprefix(prefix), config=config)


def _parse_raw(text: str) -> list[_Staged]:
    """`git diff-index --raw -z`: `:oldmode newmode oldsha newsha status` NUL `path` NUL, each."""
    fields = text.split("\0")
    found: list[_Staged] = []
    for head, path in zip(fields[0::2], fields[1::2], strict=False):
        parts = head.lstrip(":").split()
        if len(parts) >= 5 and path:
            found.append(_Staged(parts[0], parts[1], parts[2], path))
    return found
