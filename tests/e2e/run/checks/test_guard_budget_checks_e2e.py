"""Issue 29: the regression guard's cost per feature is bounded, and footprints mean the same
with and without git (units; the end-to-end cases are in tests/test_guard_budget_e2e.py)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from orchestrator.regression_budget import parse_budget
from orchestrator.run.checks.guard.footprint import ChangeWatch, TreeLedgers
from orchestrator.run.checks.guard.regression import RegressionGuard
from orchestrator.run.checks.running.check_pool import check_runner
from orchestrator.spec.feature_spec import FeatureSpec
from orchestrator.store.records import Footprint
from orchestrator.store.run_state import FeatureState, RunState
from tests.environments import unsandboxed


def test_the_guard_goes_round_every_check_when_all_share_a_file(tmp_path: Path) -> None:
    """Every feature touches one file: each round runs what fits, the least recently run first."""
    features = [{"id": f"f{i}", "name": "n", "category": "c", "description": "d", "verify": f"true {i}"}
                for i in range(7)]
    spec = FeatureSpec.model_validate({"project": "p", "features": features})
    state = RunState()
    for i in range(6):
        state.features[f"f{i}"] = FeatureState(status="passed", footprint=Footprint(changed=["shared.py"]))
    guard = RegressionGuard(spec, state, mode="affected", concurrency=1, runner=check_runner(unsandboxed(tmp_path)),
                            budget=parse_budget("2x"))
    guard.own_check_took("f6", 1.0)
    for i in range(6):
        guard.durations[f"f{i}"] = 1.0
    seen = []
    for _ in range(3):
        round = guard.check(tmp_path, spec.feature("f6"), ["shared.py"], runner=guard.runner)
        assert len(round.runs) == 2 and round.deferred == 4 and all(run.success for run in round.runs)
        seen += [run.feature_id for run in round.runs]
        guard.own_check_took("f6", 1.0)
        for i in range(6):
            guard.durations[f"f{i}"] = 1.0  # measured times vary; here they stay 1 s
    assert sorted(seen) == [f"f{i}" for i in range(6)]
    everything = RegressionGuard(spec, state, mode="all", concurrency=1, runner=check_runner(unsandboxed(tmp_path)), budget=parse_budget("0s"))
    assert everything.plan(spec.feature("f6"), []).deferred == []


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


@pytest.mark.parametrize("inotify", [True, False], ids=["inotify", "walk"])
@pytest.mark.parametrize("git", [False, True])
def test_without_checkpoints_a_feature_changed_only_its_own_files(tmp_path: Path, git: bool, inotify: bool) -> None:
    """No git, or git without commits per feature: the content snapshot, not the diff from HEAD
    (which would hold every earlier feature's work), says what a feature changed."""
    (tmp_path / "kept.txt").write_text("same\n")
    if git:
        _git(tmp_path, "init", "-q")
    (tmp_path / "earlier.txt").write_text("an earlier feature's work, never committed\n")
    watch = ChangeWatch(tmp_path, by_git=False, trees=TreeLedgers(use_inotify=inotify))
    (tmp_path / "kept.txt").write_text("same\n")  # rewritten with the same bytes: no change
    (tmp_path / "mine.txt").write_text("this feature's\n")
    (tmp_path / ".autonomous").mkdir()
    (tmp_path / ".autonomous/state.json").write_text("{}")
    assert watch.changed() == ["mine.txt"]
    (tmp_path / "mine.txt").unlink()
    assert watch.changed() == []


def test_a_walk_reads_only_the_files_that_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without inotify the tree is walked twice per feature and grows with the run: a file is
    read again only when its stat changed, and caches and orchestrate's own files are not walked."""
    from orchestrator.run.checks.guard import footprint

    reads: list[str] = []
    real = footprint.file_digest
    monkeypatch.setattr(footprint, "file_digest", lambda path: reads.append(path.name) or real(path))
    for index in range(200):
        (tmp_path / "pkg" / f"d{index % 7}").mkdir(parents=True, exist_ok=True)
        (tmp_path / "pkg" / f"d{index % 7}" / f"m{index}.py").write_text(f"x = {index}\n")
    for skipped in (".autonomous", "node_modules", "pkg/__pycache__"):
        (tmp_path / skipped).mkdir(parents=True)
        (tmp_path / skipped / "a.txt").write_text("not the project's work\n")
    (tmp_path / "link").symlink_to("pkg")
    # Written long before the walk: a file modified within a second of its stamp is read again
    # (a same-size rewrite in the same clock tick keeps the stamp), as git treats a racy entry.
    for path in [*tmp_path.rglob("*.py"), tmp_path / "link"]:
        os.utime(path, (1_700_000_000, 1_700_000_000), follow_symlinks=False)

    ledger = footprint.TreeLedger(tmp_path, use_inotify=False)
    assert len(reads) == 201 and "m3.py" in reads and "link" in reads and "a.txt" not in reads
    reads.clear()
    start = ledger.refresh()
    assert reads == [] and ledger.changed_since(start) == []
    (tmp_path / "pkg/d5/m5.py").write_text("x = 'changed'\n")
    ledger.refresh()
    assert reads == ["m5.py"] and ledger.changed_since(start) == ["pkg/d5/m5.py"]
