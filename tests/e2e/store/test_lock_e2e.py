"""One run at a time per project; a lock left by a dead run is taken over, never a live one."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.store.disk.lock import LockHeld, RunLock

REPO_ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def lock_path(tmp_path: Path) -> Path:
    return tmp_path / ".autonomous" / "state" / "run.lock"


@pytest.fixture
def live_pid() -> Iterator[int]:
    proc = subprocess.Popen(["sleep", "60"])
    try:
        yield proc.pid
    finally:
        proc.kill()
        proc.wait()


def dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()  # reaped: the pid now belongs to no process
    return proc.pid


def write_lock(
    path: Path, pid: int, *, host: str | None = None, started_at: int | None = None
) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "pid": pid,
        "host": socket.gethostname() if host is None else host,
        "startedAt": int(time.time() * 1000) if started_at is None else started_at,
    }
    path.write_text(json.dumps(record))


def test_a_second_run_is_refused_while_the_first_is_alive(lock_path: Path, live_pid: int) -> None:
    write_lock(lock_path, live_pid)
    before = lock_path.read_text()
    with pytest.raises(LockHeld) as caught:
        RunLock(lock_path).acquire()
    assert caught.value.pid == live_pid
    message = str(caught.value)
    assert f"pid {live_pid}" in message
    assert str(lock_path) in message and "remove" in message
    assert lock_path.read_text() == before


def test_a_stale_lock_from_a_dead_run_is_taken_over_with_a_warning(lock_path: Path) -> None:
    pid = dead_pid()
    write_lock(lock_path, pid)
    warnings: list[str] = []
    with RunLock(lock_path, on_warning=warnings.append):
        assert json.loads(lock_path.read_text())["pid"] == os.getpid()
    assert warnings == [f"taking over a stale lock left by pid {pid} (no longer running)"]


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_a_reused_pid_does_not_keep_a_stale_lock_alive(lock_path: Path, live_pid: int) -> None:
    # The lock predates the process now carrying its pid (as after a reboot).
    write_lock(lock_path, live_pid, started_at=int(time.time() * 1000) - 3_600_000)
    warnings: list[str] = []
    with RunLock(lock_path, on_warning=warnings.append):
        pass
    assert len(warnings) == 1 and f"pid {live_pid}" in warnings[0]


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_a_killed_run_not_yet_reaped_does_not_hold_the_lock(lock_path: Path) -> None:
    proc = subprocess.Popen(["sleep", "60"])
    try:
        write_lock(lock_path, proc.pid)
        proc.kill()
        while Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
            time.sleep(0.01)
        warnings: list[str] = []
        with RunLock(lock_path, on_warning=warnings.append):
            pass
        assert warnings == [f"taking over a stale lock left by pid {proc.pid} (no longer running)"]
    finally:
        proc.wait()


def test_a_lock_from_another_host_is_respected(lock_path: Path) -> None:
    write_lock(lock_path, dead_pid(), host="some-other-machine")
    with pytest.raises(LockHeld) as caught:
        RunLock(lock_path).acquire()
    assert "some-other-machine" in str(caught.value)


def test_release_leaves_a_lock_that_is_no_longer_ours(lock_path: Path, live_pid: int) -> None:
    lock = RunLock(lock_path)
    lock.acquire()
    write_lock(lock_path, live_pid)  # someone removed ours by hand and started another run
    lock.release()
    assert json.loads(lock_path.read_text())["pid"] == live_pid


def test_two_runs_racing_for_a_stale_lock_exactly_one_wins(lock_path: Path) -> None:
    write_lock(lock_path, dead_pid())
    signals = lock_path.parent
    script = textwrap.dedent(
        f"""
        import sys, time
        from pathlib import Path
        from orchestrator.store.disk.lock import LockHeld, RunLock

        signals = Path({str(signals)!r})
        (signals / f"ready-{{sys.argv[1]}}").touch()
        while not (signals / "go").exists():
            time.sleep(0.001)
        # A slow warning handler widens the gap between judging the lock stale and
        # replacing it, the gap in which a careless takeover lets two runs in.
        lock = RunLock(Path({str(lock_path)!r}), on_warning=lambda message: time.sleep(0.3))
        try:
            lock.acquire()
        except LockHeld:
            print("held", flush=True)
        else:
            print("won", flush=True)
            while not (signals / "done").exists():  # hold the lock until everyone has tried
                time.sleep(0.01)
            lock.release()
        """
    )
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    runners = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(n)], env=env, stdout=subprocess.PIPE, text=True
        )
        for n in range(5)
    ]
    try:
        deadline = time.monotonic() + 20
        while len(list(signals.glob("ready-*"))) < len(runners):
            assert time.monotonic() < deadline, "runners did not start"
            time.sleep(0.01)
        (signals / "go").touch()
        outcomes = [runner.stdout.readline().strip() for runner in runners if runner.stdout]
        (signals / "done").touch()
        for runner in runners:
            runner.wait(timeout=20)
    finally:
        for runner in runners:
            if runner.poll() is None:
                runner.kill()
                runner.wait()
    assert sorted(outcomes) == ["held"] * 4 + ["won"]
    assert all(runner.returncode == 0 for runner in runners)
    assert not lock_path.exists()
