"""The HTTP plumbing: a threading stdlib server that turns requests into `Reply`s and back.

HTTP/1.1 with keep-alive, because that is what the SDK's connection pool uses, and the faults
have to meet it on a pooled connection as they would in production. The server keeps track
of open connections so that stopping it also ends slow replies and idle keep-alive sockets at
once, instead of leaving handler threads behind. (The product's metering proxy has a server of
its own in the same manner, `orchestrator.local_server`: this package imports nothing of the product.)
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from fake_messages_api.reply import Reply

Dispatcher = Callable[[str, str, dict[str, str], bytes], Reply]


class FakeHTTPServer(ThreadingHTTPServer):
    """A server that hands every request to `dispatcher`, and knows its open connections.

    Handler threads are daemons, never waited for: `close_connections` ends each at its next
    read or write (or its wait on `stopping`, for a slow reply)."""

    allow_reuse_address = True
    daemon_threads = True

    def __init__(self, address: tuple[str, int], dispatcher: Dispatcher) -> None:
        super().__init__(address, _MessagesHandler)
        self.dispatcher = dispatcher
        self.stopping = threading.Event()
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        with self._open_lock:
            self._open.add(request)
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._open_lock:
                self._open.discard(request)

    def close_connections(self) -> None:
        """Shut every open client connection (ends keep-alive waits and slow replies)."""
        self.stopping.set()
        with self._open_lock:
            connections = list(self._open)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client gone mid-reply is normal here (its timeout, a dropped fault, a CLI stopped
        # with its attempt): the reply's writer has handled whatever it means.
        pass


class _MessagesHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-anthropic-api/1.0"
    # Headers and body go out in two writes; with Nagle's algorithm on, the client's delayed
    # ACK would add ~40 ms to every call, which benchmarks would measure as our overhead.
    disable_nagle_algorithm = True
    server: FakeHTTPServer

    def do_POST(self) -> None:
        self._serve()

    do_GET = do_PUT = do_PATCH = do_DELETE = do_POST

    def _serve(self) -> None:
        try:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length > 0 else b""
            headers = {name.lower(): value for name, value in self.headers.items()}
            reply = self.server.dispatcher(self.command, self.path, headers, raw)
            if reply.delay and self.server.stopping.wait(reply.delay):
                self._drop()
                return
            if reply.drop:
                self._drop()
                return
            if reply.chunks is not None:
                self._stream(reply)
                return
            self.send_response(reply.status)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            # The client went away first (for instance its timeout fired during a slow reply).
            self.close_connection = True

    def _stream(self, reply: Reply) -> None:
        """Send `reply.chunks` one by one as HTTP/1.1 chunks, `reply.gap` apart, as the API
        streams events; cut the connection after `reply.cut_after` of them, if set."""
        self.send_response(reply.status)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        started = time.monotonic()
        for sent, chunk in enumerate(reply.chunks or []):
            if reply.cut_after is not None and sent >= reply.cut_after:
                self._drop()
                return
            # On a schedule (event n at n * gap), so that a late wake-up does not add up over many events.
            wait = started + sent * reply.gap - time.monotonic()
            if wait > 0 and self.server.stopping.wait(wait):
                self._drop()
                return
            self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _drop(self) -> None:
        """Close the connection without sending a single byte of response."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def log_message(self, format: str, *args: Any) -> None:
        # Quiet: tests assert on `FakeAPI.requests`, not on an access log in their output.
        pass
