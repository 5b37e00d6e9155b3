"""Nothing a command starts outlives it: not on Ctrl-C during its start, not after `setsid`."""

from __future__ import annotations

import os
import random
import signal
import time
from pathlib import Path
import pytest
from orchestrator.safety.process_group import held_signals



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


# ---- Ctrl-C while a command starts ---------------------------------------------------------


def test_a_signal_held_while_a_command_starts_is_acted_on_afterwards() -> None:
    with pytest.raises(KeyboardInterrupt):
        with held_signals():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)  # Python would have raised here by now
            reached = True
    assert reached
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


# ---- processes that leave the command's process group ------------------------------------


