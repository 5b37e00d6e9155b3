"""Issue 40: `run --jobs N`'s integration worktree lies outside the project, so no re-check reaches the live tree.

The merge queue's worktree, where a passed feature is merged onto the branch and its check runs
again, used to be `.autonomous/integration`, inside the project: with `--sandbox none`, a
committed check reading `../../<file>` read the live project's (an ignored file of the user's,
say) and the merge passed on what a clean clone does not have. It now lives in a private
temporary directory (`orchestrate-integration-<project key>-*`, mode 0700, as combine's), removed
when the run ends, however it ends; one a kill left is removed by the next run.
Mode: `--sandbox none` (the mode where nothing else stands between a check and the live tree).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from orchestrator.run.checks.clean_checkout import checkout_base
from tests.cli_helpers import run_cli, write_spec
from tests.git_helpers import git, init_repo

pytestmark = [pytest.mark.attack, pytest.mark.slow,
              pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")]

LIVE_ONLY = "live-only secret 40i"
# Passes in the feature's own worktree; in the merge's re-check only if it can read the live project's file.
REACH_BACK = ('test -f features/{id}.txt && case "$PWD" in */.autonomous/worktrees/*) true ;; '
              '*) cat ../../live-only.txt ;; esac')


def test_a_merge_recheck_reading_up_the_tree_cannot_see_the_live_project(fake_api: Any, tmp_path: Path) -> None:
    project = init_repo(tmp_path / "project", {".gitignore": "live-only.txt\n"})
    (project / "live-only.txt").write_text(LIVE_ONLY + "\n")  # the user's ignored file, in the live tree only
    spec = write_spec(tmp_path, 1, verify=REACH_BACK, extra={"feat-01": {"max_attempts": 1}})
    base, prefix = checkout_base(project, "integration")
    leftover = base / f"{prefix}killed"  # as a `kill -9` of an earlier run leaves it
    leftover.mkdir(mode=0o700)

    result = run_cli(["run", str(spec), "--jobs", "2", "--sandbox", "none", "--no-final-verify", "--json"],
                     project, fake_api)

    merges = [(e["id"], e["result"]) for e in result.events() if e["type"] == "merge"]
    assert merges == [("feat-01", "recheck_failed")], result.stdout[-3000:] + result.stderr
    assert result.code == 1, result.stderr
    assert LIVE_ONLY not in result.stdout + result.stderr
    assert not (project / ".autonomous/integration").exists()
    assert list(base.glob(f"{prefix}*")) == [], "the integration worktree (or a killed one's) was left behind"
    assert len(git(project, "worktree", "list").strip().splitlines()) == 1  # git keeps no record of it
