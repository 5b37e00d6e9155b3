"""Nothing a command starts outlives it: not on Ctrl-C during its start, not after `setsid`."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from orchestrator.run.checks.running.check_command import run_check
from orchestrator.safety.processes.process_group import run_in_group
from orchestrator.tools.bash import run_command
from orchestrator.tools.context import ToolContext
from tests.environments import unsandboxed

REPO_ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")


def unique_sleep() -> str:
    """A `sleep` argument no other process on the machine has: its command line finds it."""
    return f"1000.{random.randrange(10**8):08d}"


def running_with_argument(argument: str) -> list[int]:
    """Pids of live (not zombie) processes whose command line has `argument` as one word."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                words = handle.read().split(b"\0")
            with open(f"/proc/{entry}/stat", "rb") as handle:
                state = handle.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if argument.encode() in words and state not in (b"Z", b"X"):
            found.append(int(entry))
    return found


def kill_all(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def our_zombies() -> list[int]:
    zombies = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if fields[0] == b"Z" and int(fields[1]) == os.getpid():
            zombies.append(int(entry))
    return zombies


@pytest.fixture
def tokens():
    """Sleep arguments for the test; whatever still runs with them afterwards is killed."""
    made: list[str] = []

    def make() -> str:
        made.append(unique_sleep())
        return made[-1]

    yield make
    for token in made:
        kill_all(running_with_argument(token))


# ---- Ctrl-C while a command starts ---------------------------------------------------------

STRESS = textwrap.dedent(
    """
    import os, random, signal, sys, threading, time
    from pathlib import Path
    from orchestrator.safety.processes.process_group import run_in_group
    from tests.environments import unsandboxed

    starts, token = int(sys.argv[1]), sys.argv[2]
    here = unsandboxed(Path("."))
    main = threading.main_thread().ident
    quiet = lambda chunk: None
    # How long a start takes here and now: the interrupts land across that span.
    spans = []
    for _ in range(5):
        began = time.perf_counter()
        run_in_group("true", here, timeout=30, on_output=quiet)
        spans.append(time.perf_counter() - began)
    span = sorted(spans)[2]
    interrupted = 0
    # Stratified moments: start k is interrupted within the k-th slice of the start's span, so a
    # few dozen starts cover the whole window evenly where random moments needed hundreds.
    moments = random.Random(20261126)
    for index in range(starts):
        at = span * (index + moments.random()) / starts
        timer = threading.Timer(at, signal.pthread_kill, (main, signal.SIGINT))
        try:
            timer.start()
            run_in_group(f"sleep {token}", here, timeout=60, on_output=quiet)
        except KeyboardInterrupt:
            interrupted += 1
        timer.join()
    print(f"{interrupted} {span * 1000:.1f}")
    """
)


STARTS = 64  # one interrupt in each 64th of a start's span (200 random moments before: same window, 3x the time)


@pytest.mark.slow
def test_starts_interrupted_by_ctrl_c_anywhere_in_the_start_under_load_leave_no_process(
    tmp_path: Path, tokens,
) -> None:
    token = tokens()
    load = subprocess.Popen([sys.executable, "-c", "while True: pass"], preexec_fn=lambda: os.nice(10))
    try:
        done = subprocess.run(
            [sys.executable, "-c", STRESS, str(STARTS), token], cwd=tmp_path, capture_output=True, text=True,
            timeout=120, env=dict(os.environ, PYTHONPATH=str(REPO_ROOT)),
        )
    finally:
        load.kill()
        load.wait()
    assert done.returncode == 0, done.stderr
    interrupted, span_ms = done.stdout.split()
    time.sleep(0.2)  # let the last SIGKILLs land
    survivors = running_with_argument(token)
    print(f"\n{STARTS} starts, {interrupted} interrupted (start takes ~{span_ms} ms): {len(survivors)} left running")
    assert int(interrupted) == STARTS
    assert survivors == []


def test_commands_do_not_inherit_held_signals(tmp_path: Path) -> None:
    output: list[bytes] = []
    finished = run_in_group("grep SigBlk /proc/self/status", unsandboxed(tmp_path), timeout=30, on_output=output.append)
    assert finished.exit_code == 0
    blocked = int(b"".join(output).split()[1], 16)
    assert not blocked & (1 << (signal.SIGINT - 1) | 1 << (signal.SIGTERM - 1))


# ---- processes that leave the command's process group ------------------------------------


def test_setsid_in_a_check_leaves_nothing_running(tmp_path: Path, tokens) -> None:
    token = tokens()
    result = run_check(f"setsid sleep {token} & setsid -f sleep {token}; echo ok", unsandboxed(tmp_path), attempt=1)
    assert result.success is True
    assert running_with_argument(token) == []


def test_setsid_in_an_agent_command_leaves_nothing_running(tmp_path: Path, tokens) -> None:
    token = tokens()
    outcome = run_command(f"setsid -f sleep {token}; setsid sleep {token} & echo started", ToolContext(unsandboxed(tmp_path)))
    assert outcome.output == "started"
    assert outcome.survivors == []
    assert running_with_argument(token) == []


def test_escapes_that_clear_their_environment_are_found_as_adopted_orphans(tmp_path: Path, tokens) -> None:
    # `env -i` drops the command's marker; the orphan comes back to us through the subreaper.
    token = tokens()
    command = f"setsid -f env -i sh -c 'sleep {token} & exec sleep {token}'; sleep 0.2; echo ok"
    finished = run_in_group(command, unsandboxed(tmp_path), timeout=30, on_output=lambda chunk: None)
    assert finished.exit_code == 0
    assert running_with_argument(token) == []


def test_an_escape_that_ignores_sigterm_is_killed(tmp_path: Path, tokens) -> None:
    token = tokens()
    command = f"setsid -f sh -c 'trap \"\" TERM; sleep {token}; true'; echo ok"
    finished = run_in_group(command, unsandboxed(tmp_path), timeout=30, on_output=lambda chunk: None)
    assert finished.exit_code == 0
    assert finished.survivors == []
    assert running_with_argument(token) == []


def test_orphans_that_ended_by_themselves_are_reaped(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    command = f"for i in 1 2 3; do setsid -f sh -c 'echo $$ >> {pids}'; done; sleep 0.3"
    run_in_group(command, unsandboxed(tmp_path), timeout=30, on_output=lambda chunk: None)
    orphans = [int(line) for line in pids.read_text().split()]
    assert len(orphans) == 3
    assert not set(orphans) & set(our_zombies())


def test_a_timed_out_command_loses_its_escapes_too(tmp_path: Path, tokens) -> None:
    token = tokens()
    finished = run_in_group(f"setsid -f sleep {token}; sleep {token}", unsandboxed(tmp_path), timeout=0.5,
                            on_output=lambda chunk: None)
    assert finished.timed_out
    assert running_with_argument(token) == []


def test_our_own_other_children_are_left_alone(tmp_path: Path, tokens) -> None:
    token = tokens()
    ours = subprocess.Popen(["sleep", token], start_new_session=True)
    try:
        run_in_group(f"setsid -f sleep {tokens()}; echo ok", unsandboxed(tmp_path), timeout=30, on_output=lambda chunk: None)
        assert ours.poll() is None
        assert running_with_argument(token) == [ours.pid]
    finally:
        ours.kill()
        ours.wait()
