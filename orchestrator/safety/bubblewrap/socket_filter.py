"""How the seccomp filter (`seccomp_filter`) reaches every sandboxed command.

Without a proxy, bwrap installs it: `with_filter` puts `/bin/sh` in front, which opens the
filter's file on fd 9 for `bwrap --seccomp 9` (no Python starts per command). With
`[sandbox] allow_hosts`, the command's first program is `sandbox_init` itself (`init_command`):
it forks the bridge to the proxy, which must open a Unix socket, then installs the filter it
is given on its command line.
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

from orchestrator.safety.bubblewrap.seccomp_filter import ARCHES, filter_program, machine
from orchestrator.user_errors import UsageError

INIT_SCRIPT = Path(__file__).with_name("sandbox_init.py")
# Inside the sandbox's fresh /tmp: the bridge's end of the proxy, the only socket file in reach.
PROXY_INSIDE = "/tmp/.orchestrate-proxy.sock"
_FD = "9"

_lock = threading.Lock()
_written: dict[bool, Path] = {}


class FilterUnavailable(UsageError):
    """No filter for this machine's architecture (exit 2 where bwrap was asked for)."""


def with_filter(bwrap_argv: list[str], *, namespaces: bool = False) -> list[str]:
    """`bwrap_argv` (bwrap first) with the filter installed by bwrap before the command runs;
    `namespaces`: the variant that lets the command make namespaces (it nests a bubblewrap)."""
    return ["/bin/sh", "-c", f'exec "$@" {_FD}<"$0"', str(filter_file(namespaces=namespaces)), bwrap_argv[0],
            "--seccomp", _FD, *bwrap_argv[1:]]


def filter_bytes(*, namespaces: bool = False) -> bytes:
    """The filter for this machine; `FilterUnavailable` on one it has no system call numbers for."""
    arch = machine()
    if arch not in ARCHES:
        raise FilterUnavailable(f"no seccomp filter for this machine ({arch})")
    return filter_program(arch, namespaces=namespaces)


def filter_file(*, namespaces: bool = False) -> Path:
    """The filter's file, written at first use (and again if it was removed)."""
    with _lock:
        known = _written.get(namespaces)
        if known is not None and known.is_file():
            return known
        program = filter_bytes(namespaces=namespaces)
        directory = Path(tempfile.mkdtemp(prefix="orchestrate-seccomp-"))
        atexit.register(shutil.rmtree, directory, True)
        path = directory / ("nesting.bpf" if namespaces else "sandbox.bpf")
        path.write_bytes(program)
        _written[namespaces] = path
        return path


@functools.cache
def init_command(*, namespaces: bool = False) -> tuple[str, ...]:
    """How `sandbox_init` starts: this Python, isolated and without site (the standard library
    only), its source and the filter given whole on the command line: no file the sandbox could
    reach (a checkout of this program inside the workspace) decides what runs first.
    `namespaces`: the nesting variant of the filter."""
    return (sys.executable or "python3", "-I", "-S", "-c", INIT_SCRIPT.read_text(encoding="utf-8"),
            "--filter", filter_bytes(namespaces=namespaces).hex())
