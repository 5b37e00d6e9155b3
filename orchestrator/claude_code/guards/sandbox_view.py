"""Paths as Claude Code's CLI sees them, in its sandbox's mount namespace, not in ours.

The write guard judges a file tool's path in this process, but the CLI opens it inside its
bubblewrap sandbox, whose `/tmp`, `$TMPDIR` and hidden homes are its own: a link the agent makes
there (`ln -s ~/.claude.json /tmp/x`) does not exist for this process, so resolving `/tmp/x` here
says "not the sign-in" while the CLI's Read of it returns the sign-in. So the guard resolves each
path in the sandbox's view: through `/proc/<pid>/root` of a process of the attempt (found by its
marker, `safety.processes.descendants`) that lives in another mount namespace than ours, one component at a
time, an absolute link target starting again at the sandbox's root (the kernel would take it
from ours). When no such process can be read (the sandbox not up yet, or gone), a path is
resolved as the CLI will see it only if it involves no private mount of the sandbox; otherwise
it is reported as unresolvable and the guard refuses it.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Mapping
from pathlib import Path

from orchestrator.safety.environment import CommandEnvironment
from orchestrator.safety.processes.descendants import MARKER_VAR
from orchestrator.user_errors import OrchestrateError

MAX_LINKS = 40  # as the kernel's own limit on links followed in one lookup


class Unresolvable(OrchestrateError):
    """The path cannot be resolved as the sandbox sees it."""


class SandboxView:
    """The mount namespace of the attempt's sandbox, found by the attempt's marker (None: no sandbox)."""

    def __init__(self, marker: str | None, private: tuple[Path, ...] = ()) -> None:
        """`private`: the sandbox's own mounts (its fresh `/tmp`, hidden homes), where our view is not its."""
        self.marker, self.private = marker, private
        self._pid: int | None = None

    def root(self) -> Path | None:
        """`/proc/<pid>/root` of a process of the attempt in the sandbox; None when there is none."""
        if self.marker is None:
            return None
        if self._pid is not None and _in_sandbox(self._pid, self.marker):
            return Path(f"/proc/{self._pid}/root")
        self._pid = next((pid for pid in _pids() if _in_sandbox(pid, self.marker)), None)
        return Path(f"/proc/{self._pid}/root") if self._pid is not None else None

    def resolve(self, path: Path) -> Path:
        """`path` (absolute) with its links resolved in the sandbox's view; `Unresolvable` when that
        view cannot be read; our own resolution when there is no sandbox."""
        if self.marker is None:
            return Path(os.path.realpath(path))
        root = self.root()
        if root is not None:
            return resolve_under(root, path)
        ours = Path(os.path.realpath(path))
        if any(place == where or place in where.parents for place in self.private for where in (path, ours)):
            raise Unresolvable(f"{path}: the sandbox's view of it cannot be read")
        return ours


def sandbox_view(environment: CommandEnvironment, cli_env: Mapping[str, str]) -> SandboxView:
    """The view of the CLI started with `cli_env` (its marker) in `environment`'s sandbox."""
    sandbox = environment.sandbox
    if not sandbox.active:
        return SandboxView(None)
    tmpdir = os.environ.get("TMPDIR")
    private = (Path("/tmp"), *([Path(tmpdir).resolve()] if tmpdir and os.path.isabs(tmpdir) else []), *sandbox.hidden)
    return SandboxView(cli_env.get(MARKER_VAR), private)


def resolve_under(root: Path, path: Path) -> Path:
    """`path` resolved as a process whose root is `root` resolves it (missing parts kept as they are)."""
    parts = deque(part for part in path.parts if part != "/")
    resolved: list[str] = []
    links = 0
    while parts:
        part = parts.popleft()
        if part in ("", "."):
            continue
        if part == "..":
            if resolved:
                resolved.pop()
            continue
        inside = "/" + "/".join([*resolved, part])
        try:
            target = os.readlink(f"{root}{inside}")
        except OSError:  # not a link, or missing: kept as it is
            resolved.append(part)
            continue
        links += 1
        if links > MAX_LINKS:
            raise Unresolvable(f"{path}: too many levels of links")
        if target.startswith("/"):
            resolved = []
        parts.extendleft(reversed(Path(target).parts))
    return Path("/" + "/".join(resolved))


def _pids() -> list[int]:
    return sorted(int(name) for name in os.listdir("/proc") if name.isdigit())


def _in_sandbox(pid: int, marker: str) -> bool:
    """Whether `pid` carries `marker` and lives in another mount namespace than this process."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as file:
            environ = file.read()
        if b"\0" + f"{MARKER_VAR}={marker}".encode() + b"\0" not in b"\0" + environ:
            return False
        if os.stat(f"/proc/{pid}/ns/mnt").st_ino == os.stat("/proc/self/ns/mnt").st_ino:
            return False
        os.stat(f"/proc/{pid}/root/")  # and its root can be read from here
        return True
    except OSError:
        return False
