"""The user's own edits in the checkout, kept when the merge queue moves their branch.

A `--jobs N` run lands each feature on the user's branch with a fast-forward of their checkout.
If the user edited (or created, or deleted) a file there that the merge changes too, git refuses
the fast-forward. That is no reason to stop the run: the user's version of each such file is
copied to `.autonomous/kept/<commit>/` first (so a kill at any point loses nothing), the files are
put back as the branch had them, the branch moves, and the user's versions are written back into
the working tree. The branch holds the feature's version; `git diff` shows the user's on top.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from orchestrator.git.run_git import check_git
from orchestrator.git.tree import split_z

KEPT_DIR = "kept"


@dataclass(frozen=True)
class KeptEdits:
    """The files the user had changed that a merge also changes, and where their copies are."""

    paths: list[str]  # relative to the repository's top
    copies: Path


def edits_in_the_way(top: Path, safe: list[str], base: str, sha: str) -> list[str]:
    """Files (from the repository's top) that the move from `base` to `sha` changes and that
    the user changed in the checkout (staged or not) or created there (not ignored)."""
    touched = set(split_z(check_git(top, *safe, "diff-tree", "-r", "--name-only", "-z", base, sha).stdout))
    if not touched:
        return []
    changed = split_z(check_git(top, *safe, "diff", "--no-ext-diff", "--name-only", "-z", base, "--").stdout)
    new = split_z(check_git(top, *safe, "ls-files", "-z", "--others", "--exclude-standard").stdout)
    return sorted(touched & {*changed, *new})


def set_aside(top: Path, safe: list[str], base: str, paths: list[str], state_dir: Path, sha: str) -> KeptEdits:
    """Copy the user's versions of `paths` under the state directory, then put the files back as
    `base` has them (a file `base` lacks is removed), so that the fast-forward can go."""
    copies = state_dir / KEPT_DIR / sha[:12]
    for path in paths:
        source, target = top / path, copies / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink() or source.exists():
            shutil.copy2(source, target, follow_symlinks=False)
    in_base = set(split_z(check_git(top, "ls-tree", "-r", "-z", "--name-only", "--full-tree", base, "--", *paths,
                                    ).stdout))
    restore = [path for path in paths if path in in_base]
    if restore:
        check_git(top, *safe, "--literal-pathspecs", "checkout", base, "--", *restore)
    for path in paths:
        if path not in in_base and ((top / path).is_symlink() or (top / path).exists()):
            (top / path).unlink()
    return KeptEdits(paths, copies)


def put_back(top: Path, kept: KeptEdits) -> None:
    """Write the user's versions back into the working tree (a file they had deleted is deleted again)."""
    for path in kept.paths:
        copy, target = kept.copies / path, top / path
        if copy.is_symlink() or copy.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.is_symlink() or target.exists():
                target.unlink()
            shutil.copy2(copy, target, follow_symlinks=False)
        elif target.is_symlink() or target.exists():
            os.unlink(target)
