"""Hiding the orchestrator's own credentials from the processes it starts (Linux).

`hide_own_secrets()` wipes the credentials from this process's environment block as the
kernel shows it (`/proc/<pid>/environ`), and marks the process not dumpable, so that a
command of the agent cannot read the key from its parent, the orchestrator. Python's
`os.environ` is a copy made at start-up and keeps working. The CLI calls it first thing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from collections.abc import Iterable

from orchestrator.safety.credentials.secrets import DEFAULT_SECRET_ENV_PATTERNS, KEY_SHAPE, is_secret_name


def hide_own_secrets(patterns: Iterable[str] = DEFAULT_SECRET_ENV_PATTERNS) -> list[str]:
    """Keep this process's credentials from other processes of the same user; Linux only.

    The kernel shows a process's environment as it was at start-up, in
    `/proc/<pid>/environ`, readable by every process of the same user: the agent's commands
    and the checks (`cat /proc/$PPID/environ`, or a test that reads its grandparent's). This
    overwrites, in place, the values of variables that look like credentials (the names of
    `patterns`, values shaped like an Anthropic key) with NUL bytes, then marks the process
    not dumpable, which also closes `/proc/<pid>/mem` and ptrace to processes without
    CAP_SYS_PTRACE. `os.environ` is unaffected (Python copied it at start-up), so the SDK
    still finds the key. Returns the names wiped; never raises.

    Not covered: the process that started the orchestrator (a shell, a CI runner) still has
    the key in its own environment, and root (with CAP_SYS_PTRACE) can read any memory.
    """
    if not sys.platform.startswith("linux"):
        return []
    wiped = _wipe_environ_block(patterns)
    _set_not_dumpable()
    return wiped


def _wipe_environ_block(patterns: Iterable[str]) -> list[str]:
    try:
        with open("/proc/self/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        # Fields 50 and 51 (1-based, counting pid and comm) are env_start and env_end.
        start, end = int(fields[47]), int(fields[48])
        if not 0 < start < end or end - start > 16 * 1024 * 1024:
            return []
        with open("/proc/self/mem", "r+b", buffering=0) as mem:
            mem.seek(start)
            block = bytearray(mem.read(end - start))
            wiped = _wipe_values(block, tuple(patterns))
            if wiped:
                mem.seek(start)
                mem.write(bytes(block))
        return wiped
    except (OSError, ValueError, IndexError, OverflowError):
        return []


def _wipe_values(block: bytearray, patterns: tuple[str, ...]) -> list[str]:
    """NUL out, in `block` (NUL-separated NAME=value entries), the values of secret variables."""
    wiped = []
    offset = 0
    for entry in bytes(block).split(b"\0"):
        name, sep, value = entry.partition(b"=")
        if sep and value:
            text_name = name.decode("utf-8", "replace")
            text_value = value.decode("utf-8", "replace")
            if is_secret_name(text_name, patterns) or KEY_SHAPE.search(text_value):
                begin = offset + len(name) + 1
                block[begin:begin + len(value)] = bytes(len(value))
                wiped.append(text_name)
        offset += len(entry) + 1
    return wiped


def _set_not_dumpable() -> None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        pr_set_dumpable = 4
        libc.prctl(pr_set_dumpable, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass
