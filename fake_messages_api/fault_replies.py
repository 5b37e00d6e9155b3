"""The fake API's replies that are not answers: its error replies (with the retry headers the
SDK reads) and the faults a test injects (a status, a dropped connection, a malformed body).
"""

from __future__ import annotations

import json
from typing import Any

from fake_messages_api.api_errors import ApiError, error_body, new_id
from fake_messages_api.faults import Fault
from fake_messages_api.reply import Reply

# Statuses the SDK retries, which therefore carry the (short) retry-after headers.
RETRYABLE = {408, 409, 429} | set(range(500, 600))
STREAM_FAULTS = ("stream_error", "stream_drop", "slow_stream")


def fault_reply(fault: Fault, body: Any, streamed: bool, retry_after: float | None) -> Reply | None:
    """The injected fault's reply to a request with `body` (or the error raised); None for a slow
    reply, which is answered late, and for a stream fault on a streamed request, met mid-stream.
    `retry_after`: the fake's own wait, sent where the fault names none."""
    if fault.kind in STREAM_FAULTS and not streamed:  # the nearest plain fault
        if fault.kind == "stream_error":
            raise ApiError(fault.status, fault.message, fault.error_type, retry_headers(retry_after))
        return Reply(drop=True) if fault.kind == "stream_drop" else None
    if fault.kind == "status":
        headers = retry_headers(fault.retry_after if fault.retry_after is not None else retry_after)
        if fault.status not in RETRYABLE:
            headers = {}
        raise ApiError(fault.status, fault.message, fault.error_type, headers)
    if fault.kind == "drop":
        return Reply(drop=True)
    if fault.kind == "malformed":
        return _malformed(fault, body)
    return None


def retry_headers(seconds: float | None) -> dict[str, str]:
    """``retry-after-ms`` (read first by the SDK) and ``retry-after`` for `seconds`."""
    if seconds is None:
        return {}
    # The SDK ignores a wait of 0, falling back to its own backoff, so never send 0.
    ms = max(seconds * 1000.0, 1.0)
    return {"retry-after-ms": f"{ms:g}", "retry-after": f"{max(seconds, 0.001):g}"}


def error_reply(error: ApiError, request_id: str, retry_after: float | None) -> Reply:
    """The API's error reply; a retryable one says when to retry (`retry_after` unless it says)."""
    headers = {"content-type": "application/json", **error.headers}
    retryable = error.status in RETRYABLE and error.headers.get("x-should-retry") != "false"
    if retryable and "retry-after-ms" not in headers:
        headers.update(retry_headers(retry_after))
    return Reply(error.status, headers, error_body(error.error_type, error.message, request_id))


def _malformed(fault: Fault, body: Any) -> Reply:
    if fault.body == "no_content":
        model = body.get("model", "unknown") if isinstance(body, dict) else "unknown"
        broken = {
            "id": new_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": model,
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 0, "output_tokens": 0},
        }
        return Reply(200, {"content-type": "application/json"}, json.dumps(broken).encode())
    # What a proxy in the way, or a connection cut mid-body, leaves behind.
    broken_body = b'<html><body>502 Bad Gateway</body></html>{"type": "mess'
    return Reply(200, {"content-type": "application/json"}, broken_body)
