"""A Ctrl-C that lands while Python runs a finalizer is not lost.

The garbage collector may run a weakref callback or a `__del__` at any moment; a signal whose
handler runs inside one raises its KeyboardInterrupt there, and Python prints it as "Exception
ignored" and goes on. A demo under load was seen running to its end after such a Ctrl-C (exit 0,
not 130). The CLI's interrupt handling raises the signal again once the finalizer has returned.
The finalizer here raises the signal itself, so the handler runs inside it every time.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

SCRIPT = """
import signal
import time
from orchestrator.cli.commands import handle_interrupts

handle_interrupts()


class Finalized:
    def __del__(self):
        signal.raise_signal(signal.SIG{name})
        sum(range(10))  # a call: the handler runs here, inside the finalizer


try:
    Finalized()  # dropped at once: its __del__ runs now
    deadline = time.monotonic() + 30  # the signal comes again within a moment; 30 s is "never"
    while time.monotonic() < deadline:
        time.sleep(0.01)
    print("lost")
except KeyboardInterrupt as interrupt:
    print("raised:", interrupt)
"""


def run(signal_name: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", SCRIPT.format(name=signal_name)], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)


def test_a_ctrl_c_inside_a_finalizer_is_raised_after_it() -> None:
    result = run("INT")
    assert result.stdout == "raised: signal 2\n", result.stdout + result.stderr
    assert "Exception ignored" not in result.stderr


def test_a_sigterm_inside_a_finalizer_is_raised_after_it() -> None:
    result = run("TERM")
    assert result.stdout == "raised: signal 15\n", result.stdout + result.stderr
