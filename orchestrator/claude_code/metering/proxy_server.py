"""The metering proxy's HTTP plumbing: a threading stdlib server on 127.0.0.1 and the replies it writes.

HTTP/1.1 with keep-alive, as Claude Code's client pools connections. The server keeps its open
connections (`local_server`, as the packaged fake does) so that stopping it ends idle
keep-alive waits and replies in flight at once. Its handler threads are not waited for: one may wait minutes on the API's next byte, so the proxy
books such a call itself when it closes, and the handler books nothing after that.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler
from typing import Any

from orchestrator.local_server import ConnectionKeepingServer

# Headers of one connection, not of the message: never passed on (RFC 9110, 7.6.1), nor the
# length, which each side sets for the body it writes.
HOP_BY_HOP = frozenset({
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection", "te",
    "trailer", "trailers", "transfer-encoding", "upgrade", "content-length", "host",
})


class ProxyServer(ConnectionKeepingServer):
    """Serves every request with `serve(handler)`; `stop()` ends open connections, `join()` frees the port."""

    def __init__(self, serve: Callable[[ProxyHandler], None]) -> None:
        super().__init__(("127.0.0.1", 0), ProxyHandler)
        self.serve = serve
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="metering-proxy", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop accepting and shut the open connections (their handlers end as soon as they next read or write)."""
        self.shutdown()
        self.close_connections()

    def join(self) -> None:
        self.server_close()
        self._thread.join(timeout=5)


class ProxyHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "orchestrate-metering-proxy"
    disable_nagle_algorithm = True  # the head and each event go out at once, not 40 ms later
    server: ProxyServer

    def do_POST(self) -> None:
        self.server.serve(self)

    do_GET = do_PUT = do_DELETE = do_PATCH = do_POST

    def log_message(self, format: str, *args: Any) -> None:
        pass  # nothing of a request is logged: its headers carry the dummy key, its body the prompt

    def read_body(self, limit: int) -> bytes | None:
        """The request's body, or None when it has no length or is larger than `limit`."""
        try:
            length = int(self.headers.get("content-length", ""))
        except ValueError:
            return None
        if not 0 <= length <= limit:
            return None
        return self.rfile.read(length)

    def send_error_json(self, status: int, error_type: str, message: str, headers: Iterable[tuple[str, str]] = ()) -> None:
        """An error in the API's own shape, so Claude Code shows `message` as the API's words."""
        body = json.dumps({"type": "error", "error": {"type": error_type, "message": message}}).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    reply_open = False  # a chunked reply is started and not ended: `end_reply` still owed

    def start_reply(self, status: int, headers: Iterable[tuple[str, str]]) -> None:
        """The head of a reply whose body follows in `send_chunk`s (chunked: its length is not known)."""
        self.reply_open = True
        self.send_response_only(status)
        for name, value in headers:
            if name.lower() not in HOP_BY_HOP:
                self.send_header(name, value)
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        self.wfile.flush()

    def send_chunk(self, data: bytes) -> None:
        if data:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

    def end_reply(self) -> None:
        self.reply_open = False
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def cut(self) -> None:
        """End the connection without finishing the reply: the client sees the stream break
        (as it would have from the API) and retries."""
        self.close_connection, self.reply_open = True, False
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
