"""What a model call can end in besides an answer; the CLI maps each to an exit code."""

from __future__ import annotations

from orchestrator.errors import UsageError


class ClientSetupError(UsageError):
    """The SDK client cannot be built: no key or credentials, a model with no id on the
    provider, a provider's extra not installed (exit 2)."""


class LimitReached(Exception):
    """A cost or token cap would be passed by the next call (exit 3, resumable)."""


class ApiUnavailable(Exception):
    """The API kept failing after every retry (exit 3, resumable)."""


class ApiAuthError(Exception):
    """The key was refused, or the model does not exist (exit 2)."""


class ModelRequestRejected(Exception):
    """The API refused this request (400-class): the attempt fails, the run goes on."""


class MalformedResponse(Exception):
    """The API answered 200 with something that is not a message."""
