"""Issue 40: `run --jobs N`'s integration worktree lies outside the project, so no re-check reaches the live tree.

The merge queue's worktree, where a passed feature is merged onto the branch and its check runs
again, used to be `.autonomous/integration`, inside the project: with `--sandbox none`, a
committed check reading `../../<file>` read the live project's (an ignored file of the user's,
say) and the merge passed on what a clean clone does not have. It now lives in a private
temporary directory (`orchestrate-integration-<project key>-*`, mode 0700, as combine's), removed
when the run ends, however it ends; one a kill left is removed by the next run.
Mode: `--sandbox none` (the mode where nothing else stands between a check and the live tree).

Mode bwrap: the integration worktree is mounted where the live repository is, as combine's and
final verification's checkouts are, so the live project's absolute path leads into the merged
tree too. Before, a re-check there read the live project by that path: a check that passes
only where the live project is (its `.autonomous/`, say) was merged.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from orchestrator.run.checks.clean_checkout import checkout_base
from tests.cli_helpers import run_cli, write_spec
from tests.e2e.combine.test_combine_verification_e2e import outside_tmp  # noqa: F401 (a fixture)
from tests.e2e.run.checks.test_verification_checkout_e2e import _bwrap_works
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


# Passes wherever the live project is in sight: it finds the run's own record there, which no
# checkout and no merged tree holds (`.autonomous/` is never committed nor carried).
LIVE_RECORD = "test -f features/{{id}}.txt && test -f {live}/.autonomous/state/run-times.json"


@pytest.mark.skipif(not _bwrap_works(), reason="bubblewrap does not work here")
def test_a_merge_recheck_in_the_sandbox_sees_the_merged_tree_at_the_live_projects_path(
    fake_api: Any, outside_tmp: Path  # noqa: F811 (the fixture imported above)
) -> None:
    """Mode bwrap. The project is outside /tmp and the home (which the sandbox hides anyway), as a
    user's is. Each feature's check passes in its worker (the live project is readable there: its
    worktree lies in it); in the merge's re-check the live path shows the merged tree, so it fails."""
    project = init_repo(outside_tmp / "project")
    spec = write_spec(outside_tmp, 2, verify=LIVE_RECORD.format(live=project),
                      extra={fid: {"max_attempts": 1} for fid in ("feat-01", "feat-02")})

    result = run_cli(["run", str(spec), "--jobs", "2", "--sandbox", "bwrap", "--no-final-verify", "--json"],
                     project, fake_api)

    events = result.events()
    passed_in_worker = sorted(e["id"] for e in events if e["type"] == "verification" and e["success"])
    merges = sorted((e["id"], e["result"]) for e in events if e["type"] == "merge")
    assert passed_in_worker == ["feat-01", "feat-02"], result.stdout[-3000:] + result.stderr
    assert merges == [("feat-01", "recheck_failed"), ("feat-02", "recheck_failed")], result.stdout[-3000:]
    assert result.code == 1, result.stderr
    base, prefix = checkout_base(project, "integration")
    assert list(base.glob(f"{prefix}*")) == [], "the integration worktree was left behind"


@pytest.mark.skipif(not _bwrap_works(), reason="bubblewrap does not work here")
def test_the_regression_guard_in_a_merge_recheck_sees_the_merged_tree_at_the_live_projects_path(
    fake_api: Any, outside_tmp: Path  # noqa: F811 (the fixture imported above)
) -> None:
    """Mode bwrap, the guard's runner: feat-01's check reads the live project only once feat-02's
    file is there, so it passes in its worker and its own merge; after feat-02 (which depends on
    it) is merged, the guard re-runs it on the merged tree, where the live path shows that tree."""
    project = init_repo(outside_tmp / "project")
    reads_live = LIVE_RECORD.format(live=project).replace("{id}", "feat-01")
    guarded = f"test -f features/feat-01.txt && {{ test ! -f features/feat-02.txt || {{ {reads_live}; }}; }}"
    spec = write_spec(outside_tmp, 2, extra={"feat-01": {"verify": guarded},
                                             "feat-02": {"depends_on": ["feat-01"], "max_attempts": 1}})

    result = run_cli(["run", str(spec), "--jobs", "2", "--sandbox", "bwrap", "--no-final-verify", "--json"],
                     project, fake_api)

    merges = [(e["id"], e["result"]) for e in result.events() if e["type"] == "merge"]
    assert merges == [("feat-01", "merged"), ("feat-02", "recheck_failed")], result.stdout[-3000:] + result.stderr
    assert "broke feature feat-01" in result.stdout, result.stdout[-3000:]
    assert result.code == 1, result.stderr
