"""The no-git footprint's ledger of a tree's files: the same changes found from inotify's events
as from a walk, whatever the change's shape, and from events at a cost that follows the change,
not the tree (issue 29, at 10,000 files)."""

from __future__ import annotations

import os
import shutil
import struct
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from orchestrator.run.checks.guard import footprint, inotify_watch
from orchestrator.run.checks.guard.footprint import ChangeWatch, TreeLedger, TreeLedgers

needs_inotify = pytest.mark.skipif(inotify_watch.InotifyWatch.start("/", lambda _d: False) is None,
                                   reason="inotify is not available here (not Linux, or no watch allowed)")
BACKENDS = [pytest.param(True, id="inotify", marks=needs_inotify), pytest.param(False, id="walk")]


def _project(root: Path) -> Path:
    (root / "pkg/sub").mkdir(parents=True)
    (root / "pkg/sub/deep.py").write_text("deep\n")
    (root / "pkg/a.py").write_text("a\n")
    (root / "top.txt").write_text("top\n")
    (root / "node_modules").mkdir()
    (root / ".autonomous").mkdir()
    return root


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _append(root: Path) -> None:
    with open(root / "pkg/a.py", "a") as handle:  # in place: the directory itself does not change
        handle.write("more\n")


def _rename_dir(root: Path) -> None:
    (root / "pkg/sub").rename(root / "pkg/moved")


def _dir_out(root: Path) -> None:
    shutil.move(str(root / "pkg/sub"), str(root.parent / "outside-sub"))


def _dir_in(root: Path) -> None:
    _write(root.parent / "incoming/x/y.py", "y\n")
    shutil.move(str(root.parent / "incoming"), str(root / "incoming"))


def _file_to_dir(root: Path) -> None:
    (root / "top.txt").unlink()
    _write(root / "top.txt/inner.py", "inner\n")


def _changed_back(root: Path) -> None:
    (root / "pkg/a.py").write_text("something else\n")
    (root / "pkg/a.py").write_text("a\n")


def _not_the_projects(root: Path) -> None:
    _write(root / "node_modules/lib/x.js", "x\n")
    _write(root / ".autonomous/state.json", "{}")
    _write(root / "pkg/__pycache__/a.pyc", "pyc")


CASES: dict[str, tuple[Callable[[Path], object], list[str]]] = {
    "new files in new directories": (lambda r: _write(r / "n/e/w.py", "w\n"), ["n/e/w.py"]),
    "appended in place": (_append, ["pkg/a.py"]),
    "same bytes rewritten": (lambda r: (r / "top.txt").write_text("top\n"), []),
    "changed and changed back": (_changed_back, []),
    "deleted": (lambda r: (r / "pkg/a.py").unlink(), ["pkg/a.py"]),
    "renamed": (lambda r: (r / "pkg/a.py").rename(r / "pkg/b.py"), ["pkg/a.py", "pkg/b.py"]),
    "directory renamed": (_rename_dir, ["pkg/moved/deep.py", "pkg/sub/deep.py"]),
    "directory moved out of the tree": (_dir_out, ["pkg/sub/deep.py"]),
    "directory moved into the tree": (_dir_in, ["incoming/x/y.py"]),
    "directory removed": (lambda r: shutil.rmtree(r / "pkg"), ["pkg/a.py", "pkg/sub/deep.py"]),
    "file replaced by a directory": (_file_to_dir, ["top.txt", "top.txt/inner.py"]),
    "symlink made": (lambda r: (r / "link").symlink_to("pkg"), ["link"]),
    "caches and orchestrate's own files": (_not_the_projects, []),
}


@pytest.mark.parametrize("inotify", BACKENDS)
@pytest.mark.parametrize("case", list(CASES))
def test_each_shape_of_change_is_found(tmp_path: Path, case: str, inotify: bool) -> None:
    root = _project(tmp_path / "project")
    change, expected = CASES[case]
    trees = TreeLedgers(use_inotify=inotify)
    watch = ChangeWatch(root, by_git=False, trees=trees)
    assert trees.of(root).watching is inotify
    change(root)
    assert watch.changed() == expected
    assert watch.changed() == expected  # asked again (the job asks after its check and for the footprint)


@pytest.mark.parametrize("inotify", BACKENDS)
def test_what_changed_between_features_belongs_to_neither(tmp_path: Path, inotify: bool) -> None:
    """A re-run check's output after the first feature is not the second feature's work."""
    root = _project(tmp_path / "project")
    trees = TreeLedgers(use_inotify=inotify)
    first = ChangeWatch(root, by_git=False, trees=trees)
    _write(root / "first.py", "1\n")
    assert first.changed() == ["first.py"]
    _write(root / "between.txt", "written by a re-run check\n")
    second = ChangeWatch(root, by_git=False, trees=trees)
    _write(root / "second.py", "2\n")
    assert second.changed() == ["second.py"]


@needs_inotify
def test_with_inotify_a_refresh_reads_only_what_was_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cost of a feature's footprint follows what it changed, not the tree: no walk, one read."""
    root = tmp_path / "project"
    for index in range(300):
        _write(root / f"src/part_{index}.py", f"x = {index}\n")
    ledger = TreeLedger(root)
    walks: list[int] = []
    reads: list[str] = []
    real_digest, real_walk = footprint.file_digest, TreeLedger._walk
    monkeypatch.setattr(footprint, "file_digest", lambda path: reads.append(path.name) or real_digest(path))
    monkeypatch.setattr(TreeLedger, "_walk", lambda self: walks.append(1) or real_walk(self))
    start = ledger.refresh()
    _write(root / "src/part_7.py", "x = 'seven'\n")
    ledger.refresh()
    assert ledger.changed_since(start) == ["src/part_7.py"] and reads == ["part_7.py"] and walks == []


@needs_inotify
def test_lost_events_mean_one_walk_not_a_missed_change(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel's queue overflowed: the ledger walks the tree once and still finds the change."""
    root = _project(tmp_path / "project")
    ledger = TreeLedger(root)
    assert ledger.watching
    start = ledger.refresh()
    (root / "pkg/a.py").write_text("changed while events were lost\n")
    watch = ledger._watch
    assert watch is not None
    monkeypatch.setattr(watch, "drain", lambda: None)
    ledger.refresh()
    assert ledger.changed_since(start) == ["pkg/a.py"]


@needs_inotify
def test_an_overflow_event_reads_as_lost_events(tmp_path: Path) -> None:
    watch = inotify_watch.InotifyWatch.start(str(tmp_path), lambda _d: True)
    assert watch is not None
    overflow = struct.pack("iIII", -1, inotify_watch.IN_Q_OVERFLOW, 0, 0)
    assert watch._take(overflow, set(), set()) is False
    watch.close()


def test_without_inotify_the_ledger_walks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another system, or more directories than the watch limit: the walk finds the same."""
    monkeypatch.setattr(inotify_watch.InotifyWatch, "start", classmethod(lambda cls, root, walked: None))
    root = _project(tmp_path / "project")
    watch = ChangeWatch(root, by_git=False, trees=TreeLedgers())
    os.remove(root / "top.txt")
    assert watch.ledger is not None and not watch.ledger.watching
    assert watch.changed() == ["top.txt"]


@needs_inotify
def test_a_directory_past_the_watch_limit_turns_the_ledger_to_walking(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A new directory that cannot be watched: its files, then and later, are found by walking."""
    root = _project(tmp_path / "project")
    ledger = TreeLedger(root)
    watch = ledger._watch
    assert watch is not None
    start = ledger.refresh()
    monkeypatch.setattr(watch, "_add_tree", lambda relative: False)  # as at the watch limit (ENOSPC)
    _write(root / "new/first.py", "1\n")
    ledger.refresh()
    assert ledger.changed_since(start) == ["new/first.py"] and not ledger.watching
    _write(root / "new/later.py", "2\n")
    ledger.refresh()
    assert ledger.changed_since(start) == ["new/first.py", "new/later.py"]


def test_a_same_size_rewrite_that_keeps_the_stamp_is_found_by_the_walk(tmp_path: Path) -> None:
    """A file modified as its stamp is taken (here: its time set after it, which no load can
    change) is read again by the next walk: a same-size rewrite within one tick of the file
    system's clock keeps size, time and inode, and is still a change."""
    root = _project(tmp_path / "project")
    top = root / "top.txt"
    later = time.time_ns() + 3600 * 10**9
    os.utime(top, ns=(later, later))
    ledger = TreeLedger(root, use_inotify=False)
    position = ledger.refresh()
    top.write_text("pot\n")
    os.utime(top, ns=(later, later))
    ledger.refresh()
    assert ledger.changed_since(position) == ["top.txt"]
