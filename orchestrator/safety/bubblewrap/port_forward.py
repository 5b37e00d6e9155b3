"""One port of the host's loopback made reachable inside the sandbox, and nothing else.

A sandboxed program that must talk to a service of this program (Claude Code's CLI to the
metering proxy on 127.0.0.1:PORT) has no host network. This module offers that one port on a
Unix socket in a private directory; the sandbox binds the socket in and its first program
(`sandbox_init --forward PORT SOCKET`) listens on the sandbox's own 127.0.0.1:PORT and carries
each connection to it, before the filter that refuses Unix sockets is installed. Only the port
named is reached: the socket leads nowhere else.

One forwarder per port per process, started at first use, in daemon threads; its socket lives
in a private directory removed at exit.
"""

from __future__ import annotations

import atexit
import shutil
import socket
import socketserver
import threading

from orchestrator.safety.bubblewrap.net_proxy import private_directory, relay

_CONNECT_TIMEOUT = 15.0


class _ForwardHandler(socketserver.BaseRequestHandler):
    server: _ForwardServer

    def handle(self) -> None:
        client: socket.socket = self.request
        try:
            upstream = socket.create_connection(("127.0.0.1", self.server.port), timeout=_CONNECT_TIMEOUT)
        except OSError:
            client.close()
            return
        upstream.settimeout(None)
        relay(client, upstream)


class _ForwardServer(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True

    def __init__(self, path: str, port: int) -> None:
        self.port = port
        super().__init__(path, _ForwardHandler)


_lock = threading.Lock()
_running: dict[int, str] = {}


def forward_socket(port: int) -> str:
    """The Unix socket that leads to the host's 127.0.0.1:`port`, started on first use."""
    with _lock:
        found = _running.get(port)
        if found is not None:
            return found
        directory = private_directory()
        path = str(directory / "forward.sock")
        server = _ForwardServer(path, port)
        threading.Thread(target=server.serve_forever, name=f"sandbox-forward-{port}", daemon=True).start()
        atexit.register(shutil.rmtree, directory, True)
        _running[port] = path
        return path
