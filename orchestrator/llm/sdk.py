"""The SDK client, built from the credentials in the environment (the key is never written anywhere)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

import anthropic

from orchestrator.config import ConfigError, RunConfig


@dataclass(frozen=True)
class Credentials:
    """Either the API key or the auth token (the other is None)."""

    api_key: str | None = None
    auth_token: str | None = None


def api_credentials(environ: Mapping[str, str] | None = None) -> Credentials:
    """The key or token from the environment; ConfigError with instructions when absent."""
    env = os.environ if environ is None else environ
    if env.get("ANTHROPIC_API_KEY"):
        return Credentials(api_key=env["ANTHROPIC_API_KEY"])
    if env.get("ANTHROPIC_AUTH_TOKEN"):
        return Credentials(auth_token=env["ANTHROPIC_AUTH_TOKEN"])
    raise ConfigError(
        "no API key: set ANTHROPIC_API_KEY (export ANTHROPIC_API_KEY=sk-ant-...) or ANTHROPIC_AUTH_TOKEN; "
        "--dry-run needs none"
    )


def make_sdk_client(config: RunConfig) -> anthropic.Anthropic:
    """The SDK client; ANTHROPIC_BASE_URL is read by the SDK itself."""
    credentials = api_credentials()
    return anthropic.Anthropic(
        api_key=credentials.api_key,
        auth_token=credentials.auth_token,
        max_retries=config.api_max_retries,
        timeout=config.api_timeout,
    )
