"""The API's error shape, and the ids the API hands out.

Every error the real Messages API returns has the same body,
``{"type": "error", "error": {"type": ..., "message": ...}, "request_id": "req_..."}``,
and every response carries a ``request-id`` header. The SDK reads both (``APIStatusError``
exposes ``request_id``, ``type`` and ``api_message``), so the fake builds them in one place.
"""

from __future__ import annotations

import json
import random
import string

# The error `type` the API uses for each HTTP status (docs: "HTTP errors").
ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    409: "conflict_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    503: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}

# Messages close to the real API's wording, for faults injected without their own message.
DEFAULT_MESSAGES: dict[int, str] = {
    400: "Invalid request.",
    401: "invalid x-api-key",
    403: "Your API key does not have permission to use the specified resource.",
    404: "Not found.",
    408: "Request timed out.",
    429: "Number of request tokens has exceeded your per-minute rate limit.",
    500: "Internal server error",
    503: "Service unavailable.",
    504: "Gateway timeout.",
    529: "Overloaded",
}

_ALPHABET = string.ascii_letters + string.digits
# Ids only need to be unique, not secret; `secrets` would cost a measurable share of a call.
_random = random.Random()


def new_id(prefix: str) -> str:
    """A fresh id in the API's style, e.g. ``msg_01AbC...`` (prefix, ``_01``, 22 base62 chars)."""
    return f"{prefix}_01" + "".join(_random.choices(_ALPHABET, k=22))


def error_type_for(status: int) -> str:
    """The API's error `type` for an HTTP status (``api_error`` for unlisted 5xx)."""
    if status in ERROR_TYPES:
        return ERROR_TYPES[status]
    return "api_error" if status >= 500 else "invalid_request_error"


def error_body(error_type: str, message: str, request_id: str) -> bytes:
    """The JSON body of an API error, exactly as the API shapes it."""
    body = {
        "type": "error",
        "error": {"type": error_type, "message": message},
        "request_id": request_id,
    }
    return json.dumps(body).encode()


class ApiError(Exception):
    """An error response the fake sends; raised anywhere while handling a request."""

    def __init__(
        self,
        status: int,
        message: str,
        error_type: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.error_type = error_type or error_type_for(status)
        self.headers = dict(headers or {})


def invalid_request(message: str) -> ApiError:
    """A 400 ``invalid_request_error`` with `message`."""
    return ApiError(400, message, "invalid_request_error")
