"""Nothing a command starts outlives it: not on Ctrl-C during its start, not after `setsid`."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from orchestrator.safety.processes.process_group import held_signals

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")


# ---- Ctrl-C while a command starts ---------------------------------------------------------


def test_a_signal_held_while_a_command_starts_is_acted_on_afterwards() -> None:
    with pytest.raises(KeyboardInterrupt), held_signals():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)  # Python would have raised here by now
        reached = True
    assert reached
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


# ---- processes that leave the command's process group ------------------------------------


