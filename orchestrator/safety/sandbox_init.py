"""The first program inside the bubblewrap sandbox: it closes the paths to host services, then
becomes the command. Run by path with `python -I -S`, so it imports the standard library only.

    python -I -S sandbox_init.py [--namespaces] [--proxy SOCKET] [--forward PORT SOCKET]... -- ARGV...

1. With `--proxy`, a bridge is forked (with `--own-proxy`, another on OWN_PROXY_PORT, for hosts
   the sandbox's own program reaches and the commands it nests do not) (and one per `--forward PORT SOCKET`, on 127.0.0.1:PORT): it listens on 127.0.0.1:PROXY_PORT in the sandbox's own
   network namespace and carries each connection to SOCKET, the host proxy's Unix socket bound
   into the sandbox (`orchestrator.safety.net_proxy`, which allows only `[sandbox] allow_hosts`).
   The bridge is made before the filter below, so it alone can open a Unix socket, and it is not
   dumpable, so the command cannot ptrace it into connecting elsewhere.
2. A seccomp filter is installed (after `PR_SET_NO_NEW_PRIVS`; bwrap has dropped every
   capability by then, `--cap-drop ALL`, even when started by root). In the spirit of Docker's
   default profile it refuses, with EPERM, the calls no build needs that widen what a process
   can reach: the mount family (`mount`, `umount2`, `pivot_root`, `move_mount`, `fsopen`, ...),
   the kernel keyring, `bpf`, `perf_event_open`, modules, kexec, `reboot`, the clock, swap,
   `open_by_handle_at`, `ptrace` and the other calls that reach into another process, and new
   namespaces (`unshare`, `setns`, `clone` with a `CLONE_NEW*` flag; `clone3`, whose flags a
   filter cannot read, answers ENOSYS and the C library falls back to `clone`). Of the socket
   families only `AF_INET`, `AF_INET6` and `AF_NETLINK` open: `socket(AF_UNIX, ...)` is refused
   (EPERM), so a socket file on the host (`docker.sock`, an ssh-agent, the session bus; the
   read-only root shows them all) cannot be connected to, and, where the network is shared, no
   abstract socket either; every other family (`AF_VSOCK`, the way to a hypervisor's services
   that the network namespace does not cover, `AF_PACKET`, `AF_ALG`, ...) is not supported
   (EAFNOSUPPORT). `socketpair` stays: it reaches nothing outside.
   Also refused: io_uring (it opens sockets past seccomp, ENOSYS), the x32 system calls, and
   any other architecture's calls (i386's `socketcall` would pass a filter keyed on `socket`).
   With `--namespaces` new namespaces and the mount family stay allowed (mounts in namespaces of
   its own making only, with no capability where it runs): the Claude Code CLI's shell prefix
   nests a bubblewrap of its own, which installs the whole filter again for each agent command.
   This is Anthropic's sandbox-runtime's design (bubblewrap, a filter on Unix sockets, network
   only through a proxy with a domain allowlist), built here without a compiler.
3. `HTTP(S)_PROXY` point at the bridge when there is one (`NO_PROXY` at the sandbox's own
   loopback), and ARGV is executed.
"""

from __future__ import annotations

import ctypes
import os
import struct
import sys

# `socket` and `threading` are imported by the bridge alone: every sandboxed command starts
# here, and their import (with `typing`'s) is most of this program's start-up.

PROXY_PORT = 3128
OWN_PROXY_PORT = 3129  # `--own-proxy`: the hosts of the program the sandbox runs, not of its nested commands
# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6]
_NR, _ARCH, _ARG0 = 0, 4, 16
_LD_W_ABS, _JEQ_K, _JGE_K, _JSET_K, _RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_EPERM, _ENOSYS, _EAFNOSUPPORT = 1, 38, 97
_AF_UNIX = 1
SOCKET_FAMILIES = (2, 10, 16)  # AF_INET, AF_INET6, AF_NETLINK (the C library's interface and route queries)
_X32_BIT = 0x40000000
# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET; unshare also NEWTIME (0x80,
# which clone's low byte, the exit signal, would collide with).
_CLONE_NEW = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
_UNSHARE_NEW = _CLONE_NEW | 0x00000080
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, _PR_SET_DUMPABLE, _PR_SET_PDEATHSIG = 38, 22, 2, 4, 1

# Refused with EPERM: what Docker's default profile leaves out for a container without added
# capabilities, and ptrace's kin (the calls that read or steer another process).
MOUNT_CALLS = ("mount", "umount2", "pivot_root", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "open_tree",
               "mount_setattr")
DENIED = (
    "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "kexec_load", "kexec_file_load",
    "init_module", "finit_module", "delete_module", "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd",
    "process_madvise", "userfaultfd", "reboot", "swapon", "swapoff", "acct", "settimeofday", "clock_settime",
    "clock_adjtime", "quotactl", "quotactl_fd", "name_to_handle_at", "open_by_handle_at", "syslog", "lookup_dcookie",
    "vhangup", "fanotify_init", "iopl", "ioperm", "uselib",
)
# Refused whole; `unshare` and `clone` by their flags, `clone3` with ENOSYS. A nesting sandbox
# keeps them (and the mount family, which works only in namespaces of its own making, where the
# mounts it was given are locked): its bubblewrap needs them to build each command's sandbox.
NAMESPACE_CALLS = ("setns", *MOUNT_CALLS)
UNSUPPORTED = ("io_uring_setup", "io_uring_enter", "io_uring_register")  # ENOSYS: callers fall back

# The numbers of these calls per machine (asm/unistd_64.h; asm-generic/unistd.h for aarch64,
# which has no iopl, ioperm or uselib); a unit test holds them to libseccomp's tables.
_GENERIC_NEW = {"open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
                "clone3": 435, "pidfd_getfd": 438, "process_madvise": 440, "mount_setattr": 442, "quotactl_fd": 443,
                "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427}
SYSCALLS: dict[str, dict[str, int]] = {
    "x86_64": {**_GENERIC_NEW, "mount": 165, "umount2": 166, "pivot_root": 155, "keyctl": 250, "add_key": 248,
               "request_key": 249, "bpf": 321, "perf_event_open": 298, "kexec_load": 246, "kexec_file_load": 320,
               "init_module": 175, "finit_module": 313, "delete_module": 176, "ptrace": 101, "process_vm_readv": 310,
               "process_vm_writev": 311, "userfaultfd": 323, "reboot": 169, "swapon": 167, "swapoff": 168, "acct": 163,
               "settimeofday": 164, "clock_settime": 227, "clock_adjtime": 305, "quotactl": 179,
               "name_to_handle_at": 303, "open_by_handle_at": 304, "syslog": 103, "lookup_dcookie": 212,
               "vhangup": 153, "fanotify_init": 300, "iopl": 172, "ioperm": 173, "uselib": 134, "setns": 308,
               "unshare": 272, "clone": 56, "socket": 41},
    "aarch64": {**_GENERIC_NEW, "mount": 40, "umount2": 39, "pivot_root": 41, "keyctl": 219, "add_key": 217,
                "request_key": 218, "bpf": 280, "perf_event_open": 241, "kexec_load": 104, "kexec_file_load": 294,
                "init_module": 105, "finit_module": 273, "delete_module": 106, "ptrace": 117, "process_vm_readv": 270,
                "process_vm_writev": 271, "userfaultfd": 282, "reboot": 142, "swapon": 224, "swapoff": 225, "acct": 89,
                "settimeofday": 170, "clock_settime": 112, "clock_adjtime": 266, "quotactl": 60,
                "name_to_handle_at": 264, "open_by_handle_at": 265, "syslog": 116, "lookup_dcookie": 18,
                "vhangup": 58, "fanotify_init": 262, "setns": 268, "unshare": 97, "clone": 220, "socket": 198},
}


class _Arch:
    def __init__(self, audit: int, x32: bool) -> None:
        self.audit, self.x32 = audit, x32


# The audit architecture of each machine (linux/audit.h), and whether it has x32 calls to refuse.
ARCHES = {"x86_64": _Arch(0xC000003E, x32=True), "aarch64": _Arch(0xC00000B7, x32=False)}


def machine() -> str:
    name = os.uname().machine.lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(name, name)


def filter_program(arch_name: str, *, namespaces: bool = False) -> bytes:
    """The seccomp BPF program (struct sock_filter[]) for `arch_name`, one of `ARCHES`;
    `namespaces`: new namespaces stay allowed (a command that nests a bubblewrap)."""
    arch, numbers = ARCHES[arch_name], SYSCALLS[arch_name]
    deny = _ERRNO | _EPERM
    # (code, jt, jf, k); jumps count instructions after this one. Every block that loads an
    # argument ends in returns on each branch, so the next block still finds the call's number.
    rules: list[tuple[int, int, int, int]] = [(_LD_W_ABS, 0, 0, _ARCH), (_JEQ_K, 1, 0, arch.audit), (_RET_K, 0, 0, deny),
                                              (_LD_W_ABS, 0, 0, _NR)]
    if arch.x32:
        rules += [(_JGE_K, 0, 1, _X32_BIT), (_RET_K, 0, 0, deny)]
    unsupported = [*UNSUPPORTED, *([] if namespaces else ["clone3"])]
    for name in unsupported:
        rules += [(_JEQ_K, 0, 1, numbers[name]), (_RET_K, 0, 0, _ERRNO | _ENOSYS)]
    denied = [*DENIED, *([] if namespaces else NAMESPACE_CALLS)]
    for name in denied:
        if name in numbers:  # aarch64 has no iopl, ioperm, uselib
            rules += [(_JEQ_K, 0, 1, numbers[name]), (_RET_K, 0, 0, deny)]
    # socket(domain, ...): the domain's low 32 bits (little-endian on both machines).
    families = len(SOCKET_FAMILIES)
    rules += [(_JEQ_K, 0, 5 + families, numbers["socket"]), (_LD_W_ABS, 0, 0, _ARG0),
              (_JEQ_K, 0, 1, _AF_UNIX), (_RET_K, 0, 0, deny)]
    rules += [(_JEQ_K, families - index, 0, family) for index, family in enumerate(SOCKET_FAMILIES)]
    rules += [(_RET_K, 0, 0, _ERRNO | _EAFNOSUPPORT), (_RET_K, 0, 0, _ALLOW)]
    if not namespaces:
        for name, flags in (("clone", _CLONE_NEW), ("unshare", _UNSHARE_NEW)):
            rules += [(_JEQ_K, 0, 4, numbers[name]), (_LD_W_ABS, 0, 0, _ARG0), (_JSET_K, 0, 1, flags),
                      (_RET_K, 0, 0, deny), (_RET_K, 0, 0, _ALLOW)]
    rules += [(_RET_K, 0, 0, _ALLOW)]
    return b"".join(struct.pack("=HBBI", *rule) for rule in rules)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


def install_filter(namespaces: bool = False) -> None:
    """Install `filter_program` on this process (and all it will start); exits 126 if it cannot."""
    name = machine()
    if name not in ARCHES:
        _fail(f"no seccomp filter for this machine ({name})")
    program = filter_program(name, namespaces=namespaces)
    libc = ctypes.CDLL(None, use_errno=True)
    fprog = _SockFprog(len(program) // 8, program)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or \
            libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        _fail(f"could not install the seccomp filter: {os.strerror(ctypes.get_errno())}")


def _fail(message: str) -> None:
    sys.stderr.write(f"orchestrate sandbox: {message}; nothing was run\n")
    sys.stderr.flush()
    os._exit(126)


def own_connection(client_port: int, port: int, own_namespace: int) -> bool:
    """Whether the connection from 127.0.0.1:`client_port` to 127.0.0.1:`port` is held by processes
    of the PID namespace `own_namespace` alone (the program the sandbox runs: Claude Code's CLI),
    none of a namespace nested in it (the commands its shell prefix runs). Unknown is no."""
    ends = (f"0100007F:{client_port:04X}", f"0100007F:{port:04X}")  # /proc/net/tcp's spelling
    try:
        with open("/proc/net/tcp", encoding="ascii") as table:
            rows = [line.split() for line in table.readlines()[1:]]
    except OSError:
        return False
    inode = next((row[9] for row in rows if len(row) > 9 and (row[1], row[2]) == ends), "0")
    target, owners = f"socket:[{inode}]", []
    for pid in (name for name in os.listdir("/proc") if name.isdigit()) if inode != "0" else ():
        try:
            if any(os.readlink(f"/proc/{pid}/fd/{fd}") == target for fd in os.listdir(f"/proc/{pid}/fd")):
                owners.append(os.stat(f"/proc/{pid}/ns/pid").st_ino)
        except OSError:
            continue
    return bool(owners) and all(owner == own_namespace for owner in owners)


def start_bridge(proxy_socket: str, port: int = PROXY_PORT, *, own_only: bool = False) -> None:
    """Fork the bridge (127.0.0.1:`port` -> `proxy_socket`); returns once it listens. `own_only`:
    it carries only the connections of this sandbox's own processes (`own_connection`)."""
    import socket
    import threading

    own_namespace = os.stat("/proc/self/ns/pid").st_ino

    def carry(client: socket.socket) -> None:
        if own_only and not own_connection(client.getpeername()[1], port, own_namespace):
            client.close()
            return
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(proxy_socket)
        except OSError:
            client.close()
            upstream.close()
            return
        threading.Thread(target=pump, args=(upstream, client), daemon=True).start()
        pump(client, upstream)

    # As `net_proxy`'s pump: this program runs alone inside the sandbox, importing nothing of ours.
    def pump(source: socket.socket, target: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                target.sendall(data)
            target.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        finally:
            source.close()

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind(("127.0.0.1", port))
        listener.listen(64)
    except OSError as err:
        _fail(f"could not start the network proxy's bridge: {err}")
    if os.fork() != 0:
        listener.close()
        return
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    libc.prctl(_PR_SET_PDEATHSIG, 9, 0, 0, 0)
    os.setsid()  # out of the command's process group: its signals are the command's
    for fd in (0, 1, 2):
        os.dup2(os.open(os.devnull, os.O_RDWR), fd)
    while True:
        client, _ = listener.accept()
        threading.Thread(target=carry, args=(client,), daemon=True).start()


def main(argv: list[str]) -> None:
    proxy = own_proxy = None
    namespaces = argv[:1] == ["--namespaces"]
    if namespaces:
        argv = argv[1:]
    if argv[:1] == ["--proxy"]:
        proxy, argv = argv[1], argv[2:]
    if argv[:1] == ["--own-proxy"]:
        own_proxy, argv = argv[1], argv[2:]
    while argv[:1] == ["--forward"] and len(argv) >= 3 and argv[1].isdigit():
        # One port of the host's loopback, carried to its socket (`orchestrator.safety.port_forward`),
        # for the program the sandbox runs: the commands it runs in a sandbox of their own are refused.
        start_bridge(argv[2], int(argv[1]), own_only=True)
        argv = argv[3:]
    if argv[:1] != ["--"] or len(argv) < 2:
        _fail("usage: sandbox_init.py [--namespaces] [--proxy SOCKET] [--own-proxy SOCKET] [--forward PORT SOCKET]... "
              "-- ARGV...")
    command = argv[1:]
    if proxy is not None:
        start_bridge(proxy)
        url = f"http://127.0.0.1:{PROXY_PORT}"
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
            os.environ[name] = url
        # The sandbox's own loopback (a check's test server) is reached directly, not through the host.
        for name in ("NO_PROXY", "no_proxy"):
            os.environ[name] = "localhost,127.0.0.1,::1"
    if own_proxy is not None:  # the program's own hosts, on a bridge its nested commands cannot use
        start_bridge(own_proxy, OWN_PROXY_PORT, own_only=True)
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
            os.environ[name] = f"http://127.0.0.1:{OWN_PROXY_PORT}"
        for name in ("NO_PROXY", "no_proxy"):
            os.environ[name] = "localhost,127.0.0.1,::1"
    install_filter(namespaces)
    try:
        os.execvp(command[0], command)
    except OSError as err:
        sys.stderr.write(f"{command[0]}: {err.strerror}\n")
        os._exit(127)


if __name__ == "__main__":
    main(sys.argv[1:])
