"""How the Unix-socket filter (`sandbox_init`) reaches every sandboxed command.

Without a proxy, bwrap installs it: `with_filter` puts `/bin/sh` in front, which opens the
filter's file on fd 9 for `bwrap --seccomp 9` (no Python starts per command). With
`[sandbox] allow_hosts`, the command's first program is `sandbox_init` itself (`init_command`):
it forks the bridge to the proxy, which must open a Unix socket, then installs the filter.
The file lives in a private directory of this process, written at first use, removed at exit.
"""

from __future__ import annotations

import atexit
import functools
import shutil
import sys
import tempfile
import threading
from pathlib import Path

from orchestrator.safety.sandbox_init import ARCHES, filter_program, machine
from orchestrator.user_errors import UsageError

INIT_SCRIPT = Path(__file__).with_name("sandbox_init.py")
# Inside the sandbox's fresh /tmp: the bridge's end of the proxy, the only socket file in reach.
PROXY_INSIDE = "/tmp/.orchestrate-proxy.sock"
_FD = "9"

_lock = threading.Lock()
_written: list[Path] = []


class FilterUnavailable(UsageError):
    """No filter for this machine's architecture (exit 2 where bwrap was asked for)."""


def with_filter(bwrap_argv: list[str]) -> list[str]:
    """`bwrap_argv` (bwrap first) with the filter installed by bwrap before the command runs."""
    return ["/bin/sh", "-c", f'exec "$@" {_FD}<"$0"', str(filter_file()), bwrap_argv[0], "--seccomp", _FD,
            *bwrap_argv[1:]]


def filter_file() -> Path:
    """The filter's file, written at first use (and again if it was removed)."""
    with _lock:
        if _written and _written[0].is_file():
            return _written[0]
        arch = machine()
        if arch not in ARCHES:
            raise FilterUnavailable(f"no Unix-socket filter for this machine ({arch})")
        directory = Path(tempfile.mkdtemp(prefix="orchestrate-seccomp-"))
        atexit.register(shutil.rmtree, directory, True)
        path = directory / "unix-sockets.bpf"
        path.write_bytes(filter_program(arch))
        _written[:] = [path]
        return path


@functools.cache
def init_command() -> tuple[str, ...]:
    """How `sandbox_init` starts: this Python, isolated and without site (the standard library
    only), its source given whole on the command line: no file the sandbox could reach (a
    checkout of this program inside the workspace) decides what runs first."""
    return (sys.executable or "python3", "-I", "-S", "-c", INIT_SCRIPT.read_text(encoding="utf-8"))
