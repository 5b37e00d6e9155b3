"""The ignored files a verification checkout carries in (git lists them): the user's, unchanged
since before every run; never what a run made or changed, never bytecode, never past a link."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from orchestrator.git import carried_files
from orchestrator.git.carried_files import RunTimes, carry_ignored


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def _later_than(stamp: int, directory: Path) -> None:
    """Wait until the file system's clock has passed `stamp` (a file's change time is coarse)."""
    probe = directory / ".probe"
    while True:
        probe.write_text("")
        if os.stat(probe).st_ctime_ns > stamp:
            probe.unlink()
            return


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src/lib").mkdir(parents=True)
    _git(root, "init", "-q")
    (root / ".gitignore").write_text("*.egg-info/\nbuild/\n_version.py\n__pycache__/\n*.so\n.probe\n")
    (root / "src/lib/__init__.py").write_text("")
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "init")
    (root / "lib.egg-info").mkdir()
    (root / "lib.egg-info/PKG-INFO").write_text("Name: lib\nVersion: 1\n")
    (root / "src/lib/_version.py").write_text("version = '1'\n")
    (root / "src/lib/__pycache__").mkdir()
    (root / "src/lib/__pycache__/x.cpython-311.pyc").write_bytes(b"bytecode")
    (root / "build").mkdir()
    (root / "build/old.txt").write_text("the user's\n")
    (root / "build/ext.so").write_bytes(b"\x7fELF")
    (root / ".autonomous/state").mkdir(parents=True)
    (root / ".autonomous/state/x.json").write_text("{}")
    (root / ".git/info/exclude").write_text(".autonomous/\n")
    return root


def _run_begins(root: Path) -> RunTimes:
    marker = root / ".probe"
    marker.write_text("")
    start = os.stat(marker).st_ctime_ns
    marker.unlink()
    _later_than(start, root)
    return RunTimes(((start + 1, None),))


def test_the_users_ignored_files_are_carried_and_what_the_run_made_or_changed_is_not(project: Path, tmp_path: Path) -> None:
    times = _run_begins(project)
    (project / "build/impl.py").write_text("the agent's\n")  # made during the run
    before = os.stat(project / "lib.egg-info/PKG-INFO")
    (project / "lib.egg-info/PKG-INFO").write_text("Name: lib\nVersion: 9\n")  # changed, and its times set back
    os.utime(project / "lib.egg-info/PKG-INFO", ns=(before.st_atime_ns, before.st_mtime_ns))
    target = tmp_path / "checkout"
    target.mkdir()

    carried = carry_ignored(project, target, times)

    found = sorted(str(path.relative_to(target)) for path in target.rglob("*") if path.is_file())
    assert found == ["build/ext.so", "build/old.txt", "src/lib/_version.py"]
    assert sorted(carried.left_out) == ["build/impl.py", "lib.egg-info/PKG-INFO"]
    assert "2 made or changed during a run" in carried.describe() and "build/impl.py" in carried.describe()
    assert os.stat(target / "build/ext.so").st_ino != os.stat(project / "build/ext.so").st_ino  # a copy, no link


def test_a_committed_link_in_the_checkout_is_never_followed_and_the_limits_hold(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target, elsewhere = tmp_path / "checkout", tmp_path / "elsewhere"
    target.mkdir()
    elsewhere.mkdir()
    (target / "build").symlink_to(elsewhere)  # as a commit could hold it
    monkeypatch.setattr(carried_files, "MAX_FILES", 1)

    carried = carry_ignored(project, target, RunTimes())

    assert list(elsewhere.iterdir()) == []
    assert carried.copied == 1 and len(carried.left_out) == 3
    assert "could not be copied" in carried.describe() and "past the limit" in carried.describe()


def _venv(root: Path) -> Path:
    venv = root / "build/venv"
    for index in range(carried_files.SHARE_MIN_FILES):
        (venv / f"lib/pkg{index % 10}").mkdir(parents=True, exist_ok=True)
        (venv / f"lib/pkg{index % 10}/m{index}.py").write_text("")
    return venv


def test_a_big_ignored_directory_no_run_touched_is_shared_read_only_not_copied(project: Path, tmp_path: Path) -> None:
    (project / ".gitignore").write_text((project / ".gitignore").read_text() + "venv/\n")
    venv = _venv(project).rename(project / "venv")
    (venv / "lib/pkg0/__pycache__").mkdir()
    (venv / "lib/pkg0/__pycache__/m0.cpython-311.pyc").write_bytes(b"the user's bytecode")
    times = _run_begins(project)
    target = tmp_path / "checkout"
    target.mkdir()

    carried = carry_ignored(project, target, times, share_dirs=True)

    assert carried.shared == [(venv, target / "venv")]
    assert (target / "venv").is_dir() and not list((target / "venv").iterdir())  # a mount point, nothing copied
    assert carry_ignored(project, tmp_path, times).shared == []  # without the sandbox: copied


@pytest.mark.parametrize("touched", ["lib/pkg3/m3.py", "lib/pkg0/__pycache__/m0.cpython-311.pyc"])
def test_an_ignored_directory_a_run_touched_anywhere_is_copied_file_by_file(project: Path, tmp_path: Path, touched: str) -> None:
    (project / ".gitignore").write_text((project / ".gitignore").read_text() + "venv/\n")
    venv = _venv(project).rename(project / "venv")
    times = _run_begins(project)
    (venv / touched).parent.mkdir(exist_ok=True)
    (venv / touched).write_text("the agent's")  # a forged .pyc, or a changed module
    target = tmp_path / "checkout"
    target.mkdir()

    carried = carry_ignored(project, target, times, share_dirs=True)

    assert carried.shared == [] and not (target / "venv" / touched).exists()
    assert (target / "venv/lib/pkg1/m1.py").is_file()
