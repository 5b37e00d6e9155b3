"""A threading stdlib HTTP server on this machine that can end its open connections at once.

The metering proxy Claude Code talks to (`claude_code.metering.proxy_server`) runs on it. (The fake of
the Messages API, a package apart that imports nothing of this one, has its own, alike:
`fake_messages_api.handler`.) Its clients pool keep-alive connections (HTTP/1.1), so stopping
the server alone would leave handler threads waiting on idle sockets or slow replies: the
server keeps its open connections and `close_connections` shuts them, which ends every
handler at its next read or write. Handler threads are daemons and never waited for.
"""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ConnectionKeepingServer(ThreadingHTTPServer):
    """A `ThreadingHTTPServer` that knows its open connections and can shut them all."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(address, handler)
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        with self._connections_lock:
            self._connections.add(request)
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._connections_lock:
                self._connections.discard(request)

    def close_connections(self) -> None:
        """Shut every open client connection (ends keep-alive waits and replies in flight)."""
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client gone mid-reply is normal for both servers (a timeout, a dropped fault, a CLI
        # stopped with its attempt): whatever it means is handled where the reply was written.
        pass
