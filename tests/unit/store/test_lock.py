"""One run at a time per project; a lock left by a dead run is taken over, never a live one."""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

import pytest

from orchestrator.store.disk.lock import LockHeld, RunLock, read_owner


@pytest.fixture
def lock_path(tmp_path: Path) -> Path:
    return tmp_path / ".autonomous" / "state" / "run.lock"


def test_lock_file_names_its_owner_and_is_removed_on_release(lock_path: Path) -> None:
    before = int(time.time() * 1000)
    with RunLock(lock_path, run_id="run-42"):
        data = json.loads(lock_path.read_text())
        assert data["pid"] == os.getpid()
        assert data["host"] == socket.gethostname()
        assert before <= data["startedAt"] <= int(time.time() * 1000)
        assert data["runId"] == "run-42"
    assert not lock_path.exists()


def test_lock_is_released_when_the_run_fails(lock_path: Path) -> None:
    with pytest.raises(ZeroDivisionError), RunLock(lock_path):
        _ = 1 / 0
    assert not lock_path.exists()


def test_a_second_lock_in_the_same_process_is_refused(lock_path: Path) -> None:
    with RunLock(lock_path):
        with pytest.raises(LockHeld):
            RunLock(lock_path).acquire()
        assert read_owner(lock_path) is not None
    assert not lock_path.exists()


@pytest.mark.parametrize("content", ["", "{not json", '{"pid": "x"}', '{"pid": 0}', "[1, 2]"])
def test_an_unreadable_lock_file_is_taken_over(lock_path: Path, content: str) -> None:
    lock_path.parent.mkdir(parents=True)
    lock_path.write_text(content)
    warnings: list[str] = []
    with RunLock(lock_path, on_warning=warnings.append):
        assert json.loads(lock_path.read_text())["pid"] == os.getpid()
    assert len(warnings) == 1 and "unreadable lock file" in warnings[0]


