"""The merge queue's batches: features that waited while another was merged land together when
they pass together, and one at a time, exactly as before, when they do not."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from orchestrator.git.worktrees import Worktrees, prepare_repository
from orchestrator.merge.queue import MergeOutcome, MergeQueue
from orchestrator.spec.feature_spec import Feature
from shared_base.check_result import CheckResult


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def _feature(feature_id: str) -> Feature:
    return Feature.model_validate({"id": feature_id, "name": feature_id.upper(), "description": "d"})


def _project(tmp_path: Path, files: dict[str, str]) -> Worktrees:
    """A repository with one worktree per feature, each having written its file (name: content)."""
    root = tmp_path / "p"
    root.mkdir()
    prepare_repository(root, lambda _m: None)
    trees = Worktrees(root, root / ".autonomous")
    for fid, name in files.items():
        (trees.create(fid) / name).write_text(f"from {fid}\n")
        trees.commit_work(fid)
    return trees


def _wait_for(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 10
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


class _Scenario:
    """Feature a is merged first; its re-check holds the queue until b and c wait, then both land."""

    def __init__(self, trees: Worktrees, batch_passes: bool) -> None:
        self.trees, self.batch_passes = trees, batch_passes
        self.single: list[str] = []  # features re-checked one at a time
        self.batches: list[tuple[list[str], list[str]]] = []  # (features, changed files) per batch re-check
        self.bases: dict[str, str] = {}
        self.outcomes: dict[str, MergeOutcome] = {}
        self.queue = MergeQueue(trees, self._recheck, lambda: False, recheck_batch=self._recheck_batch)

    def _recheck(self, _tree: Path, feature: Feature, _attempt: int) -> CheckResult | None:
        self.single.append(feature.id)
        if feature.id == "a":
            _wait_for(lambda: self.queue.waiting == 2)
        return None

    def _recheck_batch(self, tree: Path, members: Sequence[tuple[Feature, int]], changed: list[str]) -> bool:
        self.batches.append(([f.id for f, _ in members], sorted(changed)))
        assert all((tree / f"{f.id}.txt").exists() for f, _ in members)  # the tree holds the whole batch
        return self.batch_passes

    def land(self, fid: str) -> threading.Thread:
        def run() -> None:
            self.outcomes[fid] = self.queue.land(_feature(fid), 1, "true", lambda base: self.bases.setdefault(fid, base))

        thread = threading.Thread(target=run)
        thread.start()
        return thread

    def run(self) -> None:
        first = self.land("a")
        _wait_for(lambda: self.single == ["a"])
        others = [self.land("b"), self.land("c")]
        for thread in (first, *others):
            thread.join(20)


def test_features_that_waited_together_land_as_one_batch_with_a_checkpoint_each(tmp_path: Path) -> None:
    trees = _project(tmp_path, {"a": "a.txt", "b": "b.txt", "c": "c.txt"})
    scenario = _Scenario(trees, batch_passes=True)
    scenario.run()

    assert scenario.single == ["a"]  # b and c were not re-checked one by one
    [(members, changed)] = scenario.batches
    assert sorted(members) == ["b", "c"] and changed == ["b.txt", "c.txt"]
    root = trees.root
    subjects = _git(root, "log", "--format=%s", "-3").splitlines()
    assert subjects == [f"orchestrate: {members[1]}: {members[1].upper()}",
                        f"orchestrate: {members[0]}: {members[0].upper()}", "orchestrate: a: A"]
    for fid in members:  # each checkpoint holds its own feature's work only
        outcome = scenario.outcomes[fid]
        assert outcome.result == "merged" and outcome.sha is not None
        assert _git(root, "show", "--name-only", "--format=", outcome.sha).split() == [f"{fid}.txt"]
        assert scenario.bases[fid] == scenario.outcomes["a"].sha  # where a resumed run looks for it
    assert scenario.outcomes[members[1]].base == scenario.outcomes[members[0]].sha
    assert {p.name for p in root.glob("*.txt")} == {"a.txt", "b.txt", "c.txt"}  # the checkout moved
    assert _git(root, "status", "--porcelain").strip() == ""


def test_a_batch_that_does_not_pass_lands_one_at_a_time(tmp_path: Path) -> None:
    trees = _project(tmp_path, {"a": "a.txt", "b": "b.txt", "c": "c.txt"})
    scenario = _Scenario(trees, batch_passes=False)
    scenario.run()

    assert len(scenario.batches) == 1 and sorted(scenario.single[1:]) == ["b", "c"]  # then one by one
    assert all(scenario.outcomes[fid].result == "merged" for fid in "abc")
    assert len(_git(trees.root, "log", "--format=%s").splitlines()) == 4  # start + one checkpoint each


def test_a_conflict_in_a_batch_is_found_one_at_a_time(tmp_path: Path) -> None:
    trees = _project(tmp_path, {"a": "a.txt", "b": "shared.txt", "c": "shared.txt"})
    scenario = _Scenario(trees, batch_passes=True)
    scenario.run()

    assert scenario.batches == []  # the batch never got to its re-check
    results = sorted(scenario.outcomes[fid].result for fid in ("b", "c"))
    assert results == ["conflict", "merged"]
    assert _git(trees.root, "status", "--porcelain").strip() == ""


def test_a_feature_waiting_when_the_run_stops_is_withdrawn(tmp_path: Path) -> None:
    trees = _project(tmp_path, {"a": "a.txt", "b": "b.txt"})
    stopping = threading.Event()
    release = threading.Event()

    def recheck(_tree: Path, _feature: Feature, _attempt: int) -> None:
        release.wait(10)

    queue = MergeQueue(trees, recheck, stopping.is_set, recheck_batch=lambda *_: True)
    first = threading.Thread(target=lambda: queue.land(_feature("a"), 1, "true", lambda _b: None))
    first.start()
    _wait_for(lambda: trees.integration.exists())
    errors: list[BaseException] = []

    def land_b() -> None:
        try:
            queue.land(_feature("b"), 1, "true", lambda _b: None)
        except BaseException as err:
            errors.append(err)

    second = threading.Thread(target=land_b)
    second.start()
    _wait_for(lambda: queue.waiting == 1)
    stopping.set()
    second.join(10)
    release.set()
    first.join(10)
    assert len(errors) == 1 and isinstance(errors[0], KeyboardInterrupt)
    assert queue.waiting == 0
    assert "orchestrate: b" not in _git(trees.root, "log", "--format=%s")


@pytest.fixture(autouse=True)
def _quiet_git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_AUTHOR_NAME", "t")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "t")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "t@t")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "t@t")


def test_a_stop_during_a_batch_landed_one_at_a_time_tells_the_rest(tmp_path: Path) -> None:
    trees = _project(tmp_path, {"a": "a.txt", "b": "b.txt", "c": "c.txt"})
    stopping = threading.Event()
    scenario = _Scenario(trees, batch_passes=False)
    scenario.queue.should_stop = stopping.is_set
    first_of_batch = scenario._recheck

    def recheck(tree: Path, feature: Feature, attempt: int) -> CheckResult | None:
        if feature.id != "a":
            stopping.set()  # the run stops while the first of the batch is re-checked
        return first_of_batch(tree, feature, attempt)

    scenario.queue.recheck = recheck
    errors: dict[str, BaseException] = {}

    def land(fid: str) -> None:
        try:
            scenario.outcomes[fid] = scenario.queue.land(_feature(fid), 1, "true", lambda _b: None)
        except BaseException as err:
            errors[fid] = err

    threads = [threading.Thread(target=land, args=("a",))]
    threads[0].start()
    _wait_for(lambda: scenario.single == ["a"])
    threads += [threading.Thread(target=land, args=(fid,)) for fid in ("b", "c")]
    for thread in threads[1:]:
        thread.start()
    for thread in threads:
        thread.join(20)

    assert len(scenario.single) == 2  # a, then the first of the batch; the other never got a turn
    landed_in_batch = [fid for fid in ("b", "c") if fid in scenario.outcomes]
    assert len(landed_in_batch) == 1 and scenario.outcomes[landed_in_batch[0]].result == "merged"
    assert list(errors) == [({"b", "c"} - set(landed_in_batch)).pop()]
    assert all(isinstance(err, KeyboardInterrupt) for err in errors.values())
