"""A file rewritten with the same size in the same second as git last saw it (an editor's save
right after a commit) is still seen by `TreeSnapshot`: its private copy of the index keeps the
index's own time, so git's racy-entry check (an entry not older than its index is compared by
content) works there as it does on the user's index."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from orchestrator.git.tree import TreeSnapshot

PAST = 1_700_000_000  # a whole second: git compares file times to the second


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def test_a_same_size_edit_in_the_second_the_index_was_written_is_in_the_snapshot(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    # Only the whole-second mtime and the size tell git a file changed (ctime is the edit's own
    # time, which a test cannot set): the rest of the same-second race, made exact.
    _git(tmp_path, "config", "core.trustCtime", "false")
    lib = tmp_path / "lib.py"
    lib.write_text("def value():\n    return 1\n")
    os.utime(lib, (PAST, PAST))
    _git(tmp_path, "add", "lib.py")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    os.utime(tmp_path / ".git/index", (PAST, PAST))  # the index written in that same second
    lib.write_text("def value():\n    return 3\n")  # same size, same second
    os.utime(lib, (PAST, PAST))
    assert _git(tmp_path, "--no-optional-locks", "status", "--porcelain") == " M lib.py\n"  # git itself sees it

    with TreeSnapshot(tmp_path) as snapshot:
        assert _git(tmp_path, "show", f"{snapshot.tree}:lib.py") == "def value():\n    return 3\n"
