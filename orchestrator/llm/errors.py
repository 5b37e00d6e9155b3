"""What a model call can end in besides an answer; the CLI maps each to an exit code."""

from __future__ import annotations

from orchestrator.safety.credentials.redaction import redact
from orchestrator.user_errors import AuthError, OrchestrateError, StopError, UsageError


class ClientSetupError(UsageError):
    """The SDK client cannot be built: no key or credentials, a model with no id on the
    provider, a provider's extra not installed (exit 2)."""


class LimitReached(StopError):
    """A cost or token cap would be passed by the next call (exit 3, resumable)."""


class ApiUnavailable(StopError):
    """The API kept failing after every retry (exit 3, resumable)."""


class ApiAuthError(AuthError):
    """The key was refused, or the model does not exist (exit 2)."""


class ModelRequestRejected(OrchestrateError):
    """The API refused this request (400-class): the attempt fails, the run goes on."""


class MalformedResponse(OrchestrateError):
    """The API answered 200 with something that is not a message."""


def describe_error(err: BaseException | None) -> str:
    """`err` in one line for a warning: the API's own words when it gave some, redacted."""
    if err is None:
        return "unknown error"
    status = getattr(err, "status_code", None)
    api_message = getattr(err, "api_message", None)  # the API's own words, without the JSON around them
    if isinstance(api_message, str) and api_message:
        kind = getattr(err, "type", None) or type(err).__name__
        where = "mid-stream" if status == 200 else str(status)
        return f"{kind} {where}: {redact(api_message).splitlines()[0][:300]}"
    text = redact(str(err)).splitlines()[0] if str(err) else type(err).__name__
    text = text[:300]
    return f"{type(err).__name__} {status}: {text}" if status else f"{type(err).__name__}: {text}"
