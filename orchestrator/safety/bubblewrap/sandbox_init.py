"""The first program inside the bubblewrap sandbox: it closes the paths to host services, then
becomes the command. Run by path with `python -I -S`, so it imports the standard library only.

    python -I -S sandbox_init.py --filter HEX [--proxy SOCKET] [--own-proxy SOCKET] [--forward PORT SOCKET]... -- ARGV...

1. With `--proxy`, a bridge is forked (with `--own-proxy`, another on OWN_PROXY_PORT, for hosts
   the sandbox's own program reaches and the commands it nests do not; and one per `--forward
   PORT SOCKET`, on 127.0.0.1:PORT): it listens on 127.0.0.1:PROXY_PORT in the sandbox's own
   network namespace and carries each connection to SOCKET, the host proxy's Unix socket bound
   into the sandbox (`orchestrator.safety.bubblewrap.net_proxy`, which allows only `[sandbox] allow_hosts`).
   The bridge is made before the filter below, so it alone can open a Unix socket, and it is not
   dumpable, so the command cannot ptrace it into connecting elsewhere.
2. The seccomp filter HEX (`orchestrator.safety.bubblewrap.seccomp_filter`, an allowlist: what it lets
   through, what it refuses and why is said there) is installed, after `PR_SET_NO_NEW_PRIVS`;
   bwrap has dropped every capability by then (`--cap-drop ALL`, even when started by root).
   Among what it refuses: `socket(AF_UNIX, ...)`, so a socket file on the host (`docker.sock`, an
   ssh-agent, the session bus; the read-only root shows them all) cannot be connected to.
   The Claude Code CLI's sandbox gets the nesting variant (its shell prefix nests a bubblewrap
   of its own, which installs the whole filter again for each agent command). This is
   Anthropic's sandbox-runtime's design (bubblewrap, a filter on Unix sockets, network only
   through a proxy with a domain allowlist), built here without a compiler.
3. `HTTP(S)_PROXY` point at the bridge when there is one (`NO_PROXY` at the sandbox's own
   loopback), and ARGV is executed.
"""

from __future__ import annotations

import ctypes
import os
import sys

# `socket` and `threading` are imported by the bridge alone: every sandboxed command starts
# here, and their import (with `typing`'s) is most of this program's start-up.

PROXY_PORT = 3128
OWN_PROXY_PORT = 3129  # `--own-proxy`: the hosts of the program the sandbox runs, not of its nested commands
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, _PR_SET_DUMPABLE, _PR_SET_PDEATHSIG = 38, 22, 2, 4, 1


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


def install_filter(program: bytes) -> None:
    """Install `program` (struct sock_filter[], `seccomp_filter.filter_program`) on this process
    and all it will start; exits 126 if it cannot."""
    if not program or len(program) % 8:
        _fail("no seccomp filter was given (--filter HEX)")
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
    program = b""
    if argv[:1] == ["--filter"] and len(argv) >= 2:
        program, argv = bytes.fromhex(argv[1]), argv[2:]
    if argv[:1] == ["--proxy"]:
        proxy, argv = argv[1], argv[2:]
    if argv[:1] == ["--own-proxy"]:
        own_proxy, argv = argv[1], argv[2:]
    while argv[:1] == ["--forward"] and len(argv) >= 3 and argv[1].isdigit():
        # One port of the host's loopback, carried to its socket (`orchestrator.safety.bubblewrap.port_forward`),
        # for the program the sandbox runs: the commands it runs in a sandbox of their own are refused.
        start_bridge(argv[2], int(argv[1]), own_only=True)
        argv = argv[3:]
    if argv[:1] != ["--"] or len(argv) < 2:
        _fail("usage: sandbox_init.py --filter HEX [--proxy SOCKET] [--own-proxy SOCKET] [--forward PORT SOCKET]... "
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
    install_filter(program)  # none given: refused there, nothing runs unfiltered
    try:
        os.execvp(command[0], command)
    except OSError as err:
        sys.stderr.write(f"{command[0]}: {err.strerror}\n")
        os._exit(127)


if __name__ == "__main__":
    main(sys.argv[1:])
