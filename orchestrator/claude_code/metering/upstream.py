"""Where the metering proxy sends Claude Code's calls, and the real credentials it adds to them.

The run's own credentials, read from its environment as the built-in client reads them
(`llm.sdk.api_credentials`: ANTHROPIC_API_KEY, else ANTHROPIC_AUTH_TOKEN), and its API
(ANTHROPIC_BASE_URL, else Anthropic's). They stay in this process: the CLI gets a dummy key.
This is the Anthropic API upstream, passed on byte for byte. Bedrock and Vertex are another
upstream (`provider_relay.ProviderUpstream`): the run's own SDK client for the provider signs
and frames each call, and the answer is written back in the Anthropic API's shape.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from orchestrator.llm.endpoint.sdk import Credentials, api_credentials

ANTHROPIC_API = "https://api.anthropic.com"


@dataclass(frozen=True)
class Upstream:
    """The API the proxy forwards to, and its credentials (never in a repr or a log)."""

    base_url: str
    credentials: Credentials = field(repr=False)

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> Upstream:
        """The run's API and credentials; ConfigError with instructions when there is no key."""
        env = os.environ if environ is None else environ
        return cls(base_url=(env.get("ANTHROPIC_BASE_URL") or ANTHROPIC_API).rstrip("/"),
                   credentials=api_credentials(env))

    def auth_headers(self) -> dict[str, str]:
        """The headers that carry the credentials, as the API takes them."""
        if self.credentials.api_key:
            return {"x-api-key": self.credentials.api_key}
        return {"authorization": f"Bearer {self.credentials.auth_token}"}

    def url(self, target: str) -> str:
        """The upstream URL of a request target (`/v1/messages?beta=true`)."""
        return self.base_url + target
