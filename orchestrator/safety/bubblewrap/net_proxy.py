"""The sandbox's only way out to the network: an HTTP proxy that reaches `[sandbox] allow_hosts`.

A sandboxed command has its own network namespace (nothing but a private loopback), so nothing
it does reaches the host's or anyone's services. When the project lists hosts it may reach
(`allow_hosts = ["pypi.org", "*.pythonhosted.org"]`), this program runs a proxy on a Unix
socket of its own, bound into the sandbox, where a bridge (`orchestrator.safety.bubblewrap.sandbox_init`)
offers it as `HTTP(S)_PROXY` on the sandbox's loopback. The proxy takes `CONNECT host:port`
(HTTPS, any tunnel) and plain `http://` requests, and connects only to a listed host: an exact
name or address, or `*.domain` for the domain's subdomains. A plain request's `Host` header must
name the host it goes to (a server that hosts many sites would otherwise serve an unlisted one). Anything else gets `403` and no
connection is made. `network = true` bypasses all of this (the host's network, whole).

One proxy per allow-list per process, started at the first sandboxed command that needs it,
in daemon threads; its socket lives in a private directory removed at exit.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import socket
import socketserver
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path

_HEAD_LIMIT = 64 * 1024
_CONNECT_TIMEOUT = 15.0
_MAX_SOCKET_PATH = 100  # sun_path holds 108 bytes


# A name or address as `[sandbox] allow_hosts` lists it: `pypi.org`, `*.pythonhosted.org`, `[::1]`.
_HOST = re.compile(r"(\*\.)?[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*|\[[0-9A-Fa-f:.]+\]")


def checked_hosts(hosts: list[str]) -> list[str]:
    """`hosts` if each is a host as `allow_hosts` lists them; else `ValueError` naming the first that is not."""
    bad = [host for host in hosts if not _HOST.fullmatch(host)]
    if bad:
        raise ValueError(f"{bad[0]!r} is not a host name: list names like \"pypi.org\" or \"*.pythonhosted.org\"")
    return hosts


def host_allowed(host: str, allow_hosts: Iterable[str]) -> bool:
    """Whether `host` is listed: exactly (case aside), or under a listed `*.domain`."""
    name = host.strip().lower().rstrip(".").strip("[]")
    for pattern in allow_hosts:
        wanted = pattern.strip().lower().rstrip(".")
        if wanted.startswith("*."):
            if name.endswith(wanted[1:]) and len(name) > len(wanted) - 1:
                return True
        elif name == wanted.strip("[]"):
            return True
    return False


def _split_host_port(authority: str, default_port: int) -> tuple[str, int] | None:
    host, sep, port = authority.rpartition(":")
    if not sep or (host.endswith(":") and not host.startswith("[")):  # no port, or a bare IPv6 address
        return authority, default_port
    if not port.isdigit() or not 0 < int(port) < 65536:
        return None
    return host.strip("[]"), int(port)


class _ProxyHandler(socketserver.BaseRequestHandler):
    server: _ProxyServer

    def handle(self) -> None:
        client: socket.socket = self.request
        head = _read_head(client)
        if head is None:
            return
        line, _, rest = head.partition(b"\r\n")
        parts = line.decode("latin-1").split(" ")
        if len(parts) != 3:
            return _refuse(client, "400 Bad Request", "not an HTTP request")
        method, target, version = parts
        if method == "CONNECT":
            where, forward = _split_host_port(target, 443), b""
        elif target.startswith("http://"):
            authority, slash, path = target.removeprefix("http://").partition("/")
            where = _split_host_port(authority, 80)
            if where is not None and not _host_header_matches(rest, where):
                # The server would serve the Host header's site: the one the list was checked against must be it.
                return _refuse(client, "400 Bad Request", f"the Host header does not name {authority}")
            forward = f"{method} {slash}{path} {version}".encode("latin-1") + b"\r\n" + rest
        else:
            return _refuse(client, "400 Bad Request", "use CONNECT or an absolute http:// URL")
        if where is None or not host_allowed(where[0], self.server.allow_hosts):
            host = where[0] if where else target
            return _refuse(client, "403 Forbidden", f"{host} is not in [sandbox] allow_hosts of orchestrate.toml")
        try:
            upstream = socket.create_connection(where, timeout=_CONNECT_TIMEOUT)
        except OSError as err:
            return _refuse(client, "502 Bad Gateway", f"cannot reach {where[0]}: {err}")
        upstream.settimeout(None)
        with upstream:
            if method == "CONNECT":
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                upstream.sendall(forward)
            relay(client, upstream)


def _host_header_matches(headers: bytes, where: tuple[str, int]) -> bool:
    """Whether the request's one `Host` header names `where` (host and port); none at all is HTTP/1.0's way."""
    hosts = [line.partition(b":")[2].strip().decode("latin-1") for line in headers.split(b"\r\n")
             if line.partition(b":")[0].strip().lower() == b"host"]
    if not hosts:
        return True
    named = _split_host_port(hosts[0], 80) if len(hosts) == 1 else None
    return named is not None and named[1] == where[1] and \
        named[0].lower().rstrip(".") == where[0].lower().rstrip(".")


def _read_head(client: socket.socket) -> bytes | None:
    """The request up to its blank line (what came after it stays unread: tunnels start clean)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = client.recv(1)  # one byte: what follows the head belongs to the tunnel
        if not chunk or len(data) > _HEAD_LIMIT:
            return None
        data += chunk
    return data


def _refuse(client: socket.socket, status: str, why: str) -> None:
    body = f"orchestrate sandbox proxy: {why}\n".encode()
    client.sendall(f"HTTP/1.1 {status}\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)


def relay(one: socket.socket, other: socket.socket) -> None:
    """Carry bytes both ways until both sides are done."""
    back = threading.Thread(target=_pump, args=(other, one), daemon=True)
    back.start()
    _pump(one, other)
    back.join()


def _pump(source: socket.socket, target: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            target.sendall(data)
        target.shutdown(socket.SHUT_WR)
    except OSError:
        pass


class _ProxyServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def __init__(self, path: str, allow_hosts: tuple[str, ...]) -> None:
        self.allow_hosts = allow_hosts
        super().__init__(path, _ProxyHandler)


_lock = threading.Lock()
_running: dict[tuple[str, ...], str] = {}


def proxy_socket(allow_hosts: tuple[str, ...]) -> str:
    """The Unix socket of this process's proxy for `allow_hosts`, started on first use."""
    with _lock:
        found = _running.get(allow_hosts)
        if found is not None and os.path.exists(found):
            return found
        directory = private_directory()
        path = str(directory / "proxy.sock")
        server = _ProxyServer(path, allow_hosts)
        threading.Thread(target=server.serve_forever, name="sandbox-proxy", daemon=True).start()
        atexit.register(shutil.rmtree, directory, True)
        _running[allow_hosts] = path
        return path


def private_directory() -> Path:
    """A new directory only this user can enter, short enough for a socket path inside it."""
    base = tempfile.gettempdir()
    if len(base) + 40 > _MAX_SOCKET_PATH:
        base = "/tmp"
    return Path(tempfile.mkdtemp(prefix="orchestrate-proxy-", dir=base))
