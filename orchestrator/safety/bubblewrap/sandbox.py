"""The sandbox the agent's commands and the feature checks run in: bubblewrap, or none.

The shell deny-list guesses at spellings; a namespace does not have to. Under bubblewrap
(`bwrap`) each `bash -c COMMAND` runs where:

- the workspace (the project) is writable, but its `.autonomous/`, `.git/` and `orchestrate.toml`
  are read-only: `git status` and `git diff` work, forging the run's state, a commit or the run's
  configuration does not;
- the rest of the file system is read-only, `/tmp` is a fresh empty one, and the user's home
  is an empty directory, except for the tool chains the PATH reaches into there (read-only)
  and the paths the user lists in `[sandbox] read` / `write`;
- there is no network unless `[sandbox] network = true` (only a private loopback), except the
  hosts `[sandbox] allow_hosts` lists, through this program's proxy (`net_proxy`);
- no capability is kept (`--cap-drop ALL`: bubblewrap started by root would otherwise keep them
  all, and `umount` or a remount would undo every mount above), and a seccomp filter
  (`seccomp_filter`, an allowlist) lets through only the system calls builds, test runners and
  shells make: no mount family, new namespaces, keyring, `bpf`, ptrace, nor the socket families
  a build does not need: no Unix socket can be opened, so a host service
  listening on a socket file (`docker.sock`, an ssh-agent, the session bus) is out of reach,
  network or not, and no `AF_VSOCK` one (a hypervisor's services);
- a new PID namespace: when the command's shell exits, everything it started dies with it,
  `setsid` or not (and with the orchestrator, through `--die-with-parent`).

`choose_sandbox` picks one from the `sandbox` setting (`auto`, `bwrap`, `none`); `Sandbox.wrap`
turns an argv into one that runs inside. The orchestrator's own files and git operations
never go through here.
"""

from __future__ import annotations

import functools
import os
import pwd
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from orchestrator.safety.bubblewrap.net_proxy import proxy_socket
from orchestrator.safety.bubblewrap.port_forward import forward_socket
from orchestrator.safety.bubblewrap.socket_filter import PROXY_INSIDE, FilterUnavailable, init_command, with_filter
from orchestrator.safety.bubblewrap.stand_in import StandIn
from orchestrator.user_errors import UsageError

SANDBOX_MODES = ("auto", "bwrap", "none")
OWN_PROXY_INSIDE = "/tmp/.orchestrate-own-proxy.sock"  # `wrap(own_hosts=...)`: the program's own proxy
# Entries of the workspace the commands may read but never change: the run's state, git, its settings.
PROTECTED_NAMES = (".autonomous", ".git", "orchestrate.toml")
INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap; "
    "Arch: pacman -S bubblewrap)"
)
# Tool chains commonly installed under the home; their directories stay visible, read-only.
_TOOLCHAIN_VARIABLES = ("PYENV_ROOT", "RUSTUP_HOME", "CARGO_HOME", "NVM_DIR", "VIRTUAL_ENV", "CONDA_PREFIX", "GOROOT")
# Never shown from a home, whatever the PATH says.
_PRIVATE_IN_HOME = frozenset({".ssh", ".aws", ".config", ".gnupg", ".docker", ".kube", ".azure", ".netrc"})
_PROBE_TIMEOUT = 15.0
# Who a command that nests bubblewrap runs as when orchestrate runs as root (`_nesting_flags`).
NESTING_UID = 65532

MountKind = Literal["tmpfs", "ro", "rw"]


class SandboxUnavailable(UsageError):
    """`--sandbox bwrap` was asked for and cannot be had here: the message says why (exit 2)."""


@dataclass(frozen=True)
class Sandbox:
    """How commands are isolated: `kind` "bwrap" wraps them, "none" runs them as they are."""

    kind: Literal["bwrap", "none"]
    reason: str
    """Why this one: shown by `orchestrate doctor` and in the run's first event."""
    warning: str | None = None
    """Said once at the start of a run: `auto` found no usable bubblewrap."""
    bwrap: str = "bwrap"
    hidden: tuple[Path, ...] = ()
    """Homes replaced by an empty directory."""
    read: tuple[Path, ...] = ()
    """Visible read-only even where hidden (tool chains, `[sandbox] read`, the spec's directory)."""
    write: tuple[Path, ...] = ()
    """Writable besides the workspace (`[sandbox] write`)."""
    network: bool = False
    allow_hosts: tuple[str, ...] = ()
    """Hosts reachable through the proxy when `network` is off (`[sandbox] allow_hosts`)."""

    @property
    def active(self) -> bool:
        return self.kind == "bwrap"

    def hides(self, path: Path) -> str | None:
        """Why the existing `path` (resolved, outside the project) is out of sight in the sandbox:
        "private" (a home's `.ssh`, `.aws`, ...: never shown unless the user lists it) or
        "hidden" (under a home or the fresh /tmp, and not shown read-only); None when visible."""
        if not self.active or any(_within(path, shown) for shown in self.read):
            return None
        for home in self.hidden:
            if _within(path, home) and path != home:
                return "private" if path.relative_to(home).parts[0] in _PRIVATE_IN_HOME else "hidden"
        fresh = [Path("/tmp").resolve(), *(Path(tmp) for tmp in _private_tmp_dirs())]
        return "hidden" if any(_within(path, tmp) for tmp in fresh) else None

    def wrap(
        self, argv: Sequence[str], workspace: Path, forward_ports: Sequence[int] = (),
        own_hosts: Sequence[str] = (), *, nests: bool = False, stand_in: StandIn | None = None,
    ) -> list[str]:
        """`argv` as it runs in the sandbox, with `workspace` writable and its working directory;
        `forward_ports` of the host's loopback reachable on the sandbox's (`port_forward`), and
        `own_hosts` through a proxy of its own: both for `argv`'s own processes only, not for the
        commands it runs in a sandbox nested in this one (Claude Code's shell prefix).
        `nests`: the command starts a bubblewrap of its own for each of its commands (that shell
        prefix), which installs the whole filter there: it may make namespaces.
        `stand_in`: `workspace` lies in a verification checkout, shown where the live project is."""
        if not self.active:
            return list(argv)
        command = [self.bwrap, *_namespace_flags(self.network), *(_nesting_user() if nests else []),
                   "--ro-bind", "/", "/", *(_nesting_dev() if nests else ["--dev", "/dev"]), "--proc", "/proc"]
        if stand_in is not None:
            workspace = stand_in.inside(Path(workspace))
        else:
            _make_state_dir(Path(workspace))
        for kind, path, source in self._mounts(Path(workspace), stand_in):
            command += ["--tmpfs", str(path)] if kind == "tmpfs" else _bind(kind, source, path)
        init: list[str] = []
        if self.allow_hosts and not self.network:
            # Into the fresh /tmp, mounted above: the bridge's end of the proxy, the only socket file in reach.
            command += ["--ro-bind", proxy_socket(self.allow_hosts), PROXY_INSIDE]
            init += ["--proxy", PROXY_INSIDE]
        if own_hosts and not self.network:
            command += ["--ro-bind", proxy_socket(tuple(dict.fromkeys(own_hosts))), OWN_PROXY_INSIDE]
            init += ["--own-proxy", OWN_PROXY_INSIDE]
        for port in forward_ports if not self.network else ():  # with the host's network, the port is there
            inside = f"/tmp/.orchestrate-forward-{port}.sock"
            command += ["--ro-bind", forward_socket(port), inside]
            init += ["--forward", str(port), inside]
        if init:  # the first program forks the bridges, then installs the filter itself
            return [*command, "--chdir", str(workspace), "--", *init_command(namespaces=nests), *init, "--", *argv]
        # bwrap installs the filter (read from fd 9, which sh opens): no Python start-up per command.
        return with_filter([*command, "--chdir", str(workspace), "--", *argv], namespaces=nests)

    def _mounts(self, workspace: Path, stand_in: StandIn | None = None) -> list[tuple[MountKind, Path, Path]]:
        """Mounts (kind, where, from) in the order they must be made: a deeper path lies on top of
        a shallower one. With `stand_in`, the checkout is mounted over the live project, and no
        path of the live project is mounted on top of it (a spec or a `[sandbox]` path in it)."""
        mounts: list[tuple[MountKind, Path, Path]] = [("tmpfs", Path("/tmp"), Path("/tmp"))]
        mounts += [("tmpfs", Path(tmp), Path(tmp)) for tmp in _private_tmp_dirs()]
        mounts += [("tmpfs", home, home) for home in self.hidden]
        live = stand_in.live if stand_in is not None else workspace
        # Reads only make things visible; inside the workspace they would make them read-only.
        mounts += [("ro", path, path) for path in self.read
                   if path.exists() and not _within(path, workspace) and not _within(path, live)]
        if stand_in is None:
            mounts.append(("rw", workspace, workspace))
            # A file too: a worktree's `.git` names its repository, and must not be pointed elsewhere.
            mounts += [("ro", workspace / name, workspace / name) for name in PROTECTED_NAMES
                       if (workspace / name).exists()]
        else:
            source = stand_in.source(workspace)
            mounts.append(("rw", stand_in.live, stand_in.checkout))
            mounts += [("ro", workspace / name, source / name) for name in PROTECTED_NAMES if (source / name).exists()]
            mounts += [("ro", stand_in.inside(place), live_dir) for live_dir, place in stand_in.shared]
        # After the protected ones: a user who lists `.git` under `write` means it.
        mounts += [("rw", path, path) for path in self.write if path.exists() and not _within(path, live)]
        # Stable: at equal depth the later mount wins, as listed above.
        return sorted(mounts, key=lambda mount: len(mount[1].parts))


NO_SANDBOX = Sandbox("none", "no sandbox asked for")


def _make_state_dir(workspace: Path) -> None:
    """The workspace's `.autonomous/`, made empty if it is missing, so that it is mounted read-only
    like the protected names that exist: where there was none (`plan`, `validate --run-checks` in a
    new project), a command could otherwise create it, with a state and logs the next run trusts."""
    state_dir = workspace / PROTECTED_NAMES[0]
    if not os.path.lexists(state_dir):
        try:
            state_dir.mkdir(mode=0o700)
        except OSError:
            pass  # a read-only or vanished workspace: the command fails there on its own


def _namespace_flags(network: bool) -> list[str]:
    # Started by root, bwrap would keep every capability unless told (as a user it keeps none).
    flags = ["--die-with-parent", "--cap-drop", "ALL", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
             "--unshare-cgroup-try"]
    return flags if network else [*flags, "--unshare-net"]


def _nesting_user() -> list[str]:
    """For a sandbox whose command starts bubblewrap again: started by root, that inner bwrap
    needs a user namespace of its own, and with no capability left root may not map its uid 0
    into one (the kernel asks for CAP_SETFCAP). So the command runs as `NESTING_UID` in a user
    namespace that maps it to root outside (its files stay root's). A user's bwrap makes one anyway."""
    return ["--unshare-user", "--uid", str(NESTING_UID), "--gid", str(NESTING_UID)] if os.geteuid() == 0 else []


def _nesting_dev() -> list[str]:
    """Its /dev: under bwrap's own `--dev` the inner one cannot mount its /proc (as root), so
    /dev is assembled here: the same devices, without a terminal's."""
    dev = ["--tmpfs", "/dev", "--dir", "/dev/shm"]
    for name in ("null", "zero", "full", "random", "urandom", "tty"):
        dev += ["--dev-bind", f"/dev/{name}", f"/dev/{name}"]
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        dev += ["--symlink", target, f"/dev/{name}"]
    return dev


def _within(path: Path, directory: Path) -> bool:
    return path == directory or directory in path.parents


def _bind(kind: MountKind, source: Path, path: Path) -> list[str]:
    return ["--ro-bind" if kind == "ro" else "--bind", str(source), str(path)]


def _private_tmp_dirs() -> list[str]:
    """$TMPDIR, a fresh empty one too: tools write there. Under /tmp it must be made again
    (the fresh /tmp lacks it); elsewhere it must exist (the rest is read-only)."""
    tmpdir = os.environ.get("TMPDIR")
    if not tmpdir or not os.path.isabs(tmpdir):
        return []
    resolved = Path(tmpdir).resolve()
    if resolved in (Path("/"), Path("/tmp")):
        return []
    return [str(resolved)] if Path("/tmp") in resolved.parents or resolved.is_dir() else []


def choose_sandbox(
    mode: str, project_root: Path, *, read: Iterable[str] = (), write: Iterable[str] = (), network: bool = False,
    also_read: Iterable[Path] = (), allow_hosts: Iterable[str] = (),
) -> Sandbox:
    """The sandbox `mode` gives here; `SandboxUnavailable` when `bwrap` was asked for and cannot run.

    `read`/`write` are the user's extra paths (`~` is the real home, relative ones are relative
    to `project_root`); `also_read` are paths the run itself needs visible (the spec's directory).
    """
    if mode not in SANDBOX_MODES:
        raise SandboxUnavailable(f"--sandbox {mode}: not a sandbox; use one of {', '.join(SANDBOX_MODES)}")
    if mode == "none":
        return Sandbox("none", "sandbox = none: commands run with your user's full access")
    found = shutil.which("bwrap")
    problem = "bubblewrap (bwrap) is not installed" if found is None else probe_bwrap(found)
    if problem is not None:
        if mode == "bwrap":
            raise SandboxUnavailable(f"--sandbox bwrap: {problem}; {_what_to_do(found)}, or run with --sandbox none")
        warning = (
            f"no sandbox: {problem}, so the agent's commands and the checks run with your user's full access; "
            f"{_what_to_do(found)} to isolate them, or pass --sandbox none to accept this and silence the warning"
        )
        return Sandbox("none", f"auto: {problem}", warning=warning)
    assert found is not None
    homes = _homes()
    # The run's own needs never open a whole home (a spec kept in ~ itself): the user's may.
    needed = [path for path in also_read if not any(_within(home, path) for home in homes)]
    return Sandbox(
        "bwrap", f"{mode}: bubblewrap at {found} works here; no Unix sockets; {_reach(network, allow_hosts)}",
        bwrap=found, hidden=tuple(homes),
        # /tmp is a fresh one inside, so a venv or tool chain the PATH finds there is shown too.
        read=tuple(_unique([*_toolchain_dirs([*homes, Path("/tmp").resolve()]), *needed, *_user_paths(read, project_root)])),
        write=tuple(_unique(_user_paths(write, project_root))), network=network,
        allow_hosts=tuple(dict.fromkeys(allow_hosts)),
    )


def _reach(network: bool, allow_hosts: Iterable[str]) -> str:
    hosts = list(allow_hosts)
    if network:
        return "network: all of it (network = true)"
    return f"network: only {', '.join(hosts)}, through the proxy" if hosts else "no network"


def _what_to_do(found: str | None) -> str:
    if found is None:
        return INSTALL_HINT
    return "allow unprivileged user namespaces (in a container: run it with --privileged or a seccomp profile that permits them)"


@functools.lru_cache(maxsize=4)
def probe_bwrap(bwrap: str) -> str | None:
    """None when `bwrap` can build the namespaces commands run in and install the Unix-socket
    filter there; else what went wrong."""
    try:
        argv = with_filter([bwrap, *_namespace_flags(False), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                            "--tmpfs", "/tmp", "--", "true"])
    except FilterUnavailable as err:
        return str(err)
    try:
        result = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=_PROBE_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"bubblewrap at {bwrap} could not be started: {err}"
    if result.returncode == 0:
        return None
    said = result.stderr.decode("utf-8", errors="replace").strip().splitlines()
    return f"bubblewrap at {bwrap} does not work here ({said[-1] if said else f'exit {result.returncode}'})"


def _homes() -> list[Path]:
    """The user's home as $HOME names it and as the password database does (they may differ)."""
    candidates = [os.environ.get("HOME", "")]
    try:
        candidates.append(pwd.getpwuid(os.getuid()).pw_dir)
    except KeyError:
        pass
    homes = [Path(c).resolve() for c in candidates if c and os.path.isabs(c)]
    return _unique(home for home in homes if home != Path("/") and home.is_dir())


def _toolchain_dirs(homes: Sequence[Path]) -> list[Path]:
    """Directories under a home (or /tmp) that the PATH or the running Python need: pyenv, cargo, a venv."""
    wanted = [Path(entry) for entry in os.environ.get("PATH", "").split(os.pathsep) if os.path.isabs(entry)]
    wanted += [Path(os.environ[name]) for name in _TOOLCHAIN_VARIABLES if os.path.isabs(os.environ.get(name, ""))]
    wanted += [Path(sys.prefix), Path(sys.base_prefix)]
    found: list[Path] = []
    for path in wanted:
        resolved = path.resolve()
        for home in homes:
            if home in resolved.parents:
                found.append(_visible_part(home, resolved.relative_to(home).parts))
    return [path for path in found if path.name not in _PRIVATE_IN_HOME and path.exists()]


def _visible_part(home: Path, parts: tuple[str, ...]) -> Path:
    """The directory of a home to show for a path inside it: the top one (`~/.pyenv`), but only
    `bin` and `lib` of `~/.local`, whose `share` holds keyrings and the like."""
    if parts[0] == ".local" and len(parts) > 1:
        return home / ".local" / parts[1]
    return home / parts[0]


def _user_paths(paths: Iterable[str], project_root: Path) -> list[Path]:
    resolved = []
    for raw in paths:
        text = os.path.expanduser(raw)
        path = Path(text) if os.path.isabs(text) else project_root / text
        resolved.append(path.resolve())
    return resolved


def _unique(paths: Iterable[Path]) -> list[Path]:
    return list(dict.fromkeys(paths))
