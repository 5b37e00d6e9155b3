"""Issue 40: `combine`'s integration worktree lies outside the project, so no check reaches the live tree.

The worktree where `combine` lands each shard's checkpoint and re-runs the checks used to be
`.autonomous/integration`, inside the project: with `--sandbox none`, a committed check reading
`../../<file>` read the live project's (an ignored file of the user's, say) and passed on what a
clean clone does not have. It now lives in a private temporary directory
(`orchestrate-combine-<project key>-*`, mode 0700), removed when combine ends, however it ends
(one a kill left is removed by the next combine). Mode: `--sandbox none` (with bubblewrap the
tree is mounted over the live repository, `test_combine_verification_e2e.py`).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from orchestrator.run.checks.clean_checkout import checkout_base
from tests.cli_helpers import run_cli, write_spec
from tests.git_helpers import clone, git, init_repo

pytestmark = [pytest.mark.attack, pytest.mark.slow,
              pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")]

LIVE_ONLY = "live-only secret 40d"
# Passes in the shard (IN_SHARD set); in combine only if it can read the live project's file.
REACH_BACK = 'test -f features/{id}.txt && { [ -n "$IN_SHARD" ] || cat ../../live-only.txt; }'


def test_a_committed_check_reading_up_the_tree_cannot_see_the_live_project(fake_api: Any, tmp_path: Path) -> None:
    seed = init_repo(tmp_path / "seed", {".gitignore": "live-only.txt\n"})
    remote = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(seed), str(remote))
    spec = write_spec(tmp_path, 1, verify=REACH_BACK)
    shard = clone(remote, tmp_path / "shard")
    ran = run_cli(["run", str(spec), "--shard", "1/1", "--sandbox", "none"], shard, fake_api, IN_SHARD="1")
    assert ran.code == 0, ran.stdout[-2000:] + ran.stderr
    artifact = tmp_path / "artifact"
    assert run_cli(["export", str(artifact)], shard, fake_api).code == 0
    final = clone(remote, tmp_path / "final")
    (final / "live-only.txt").write_text(LIVE_ONLY + "\n")  # the user's ignored file, in the live tree only
    base, prefix = checkout_base(final, "combine")
    leftover = base / f"{prefix}killed"  # as a `kill -9` of an earlier combine leaves it
    leftover.mkdir(mode=0o700)

    result = run_cli(["combine", str(spec), str(artifact), "--sandbox", "none"], final, fake_api)

    assert result.code == 1, result.stdout[-3000:] + result.stderr  # the re-check failed: it saw no live file
    assert "feat-01: its own check fails on the combined tree" in result.stderr, result.stderr
    assert LIVE_ONLY not in result.stdout + result.stderr
    assert not (final / ".autonomous/integration").exists()
    assert list(base.glob(f"{prefix}*")) == [], "the integration worktree (or a killed one's) was left behind"
    assert len(git(final, "worktree", "list").strip().splitlines()) == 1  # git keeps no record of it
