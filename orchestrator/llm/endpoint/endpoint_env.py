"""The environment variables the SDK reads for its endpoint and key, checked before any work.

The SDK takes ANTHROPIC_BASE_URL (and its Bedrock and Vertex siblings) and the key as they are
(Bedrock's and Vertex's own region, project and credentials: `cloud_env`):
a stray newline from a copy and paste ends in a traceback from the HTTP library when the client
is built, and a URL without a scheme or a key with a space in it only at the first call, after
the retries, as "the API is unreachable". Each is one line here instead (a `ClientSetupError`,
exit 2), naming the variable and what to do; a key's value is never shown.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import urlsplit

from orchestrator.llm.endpoint.cloud_env import check_cloud_environment, odd_character
from orchestrator.llm.errors import ClientSetupError

BASE_URL_VARIABLES = {
    "anthropic": "ANTHROPIC_BASE_URL", "bedrock": "ANTHROPIC_BEDROCK_BASE_URL", "vertex": "ANTHROPIC_VERTEX_BASE_URL",
}
SECRET_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
CUSTOM_HEADERS = "ANTHROPIC_CUSTOM_HEADERS"  # `Name: value` lines every provider's client sends
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an HTTP token (RFC 9110)


def url_problem(url: str) -> str | None:
    """Why `url` cannot be an API endpoint, or None."""
    odd = odd_character(url)
    if odd:
        return f"it holds {odd}"
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 (a port that is not a number raises here)
    except ValueError as err:
        return f"it is not a URL ({err})"
    if parts.scheme not in ("http", "https"):
        return "it does not start with http:// or https://"
    if not host:
        return "it names no host"
    return None


def check_endpoint_environment(provider: str, environ: Mapping[str, str]) -> None:
    """ClientSetupError for the first malformed endpoint or key variable the provider's client reads."""
    variable = BASE_URL_VARIABLES.get(provider, BASE_URL_VARIABLES["anthropic"])
    url = environ.get(variable)
    if url is not None:
        problem = url_problem(url) if url else "it is set but empty"
        if problem:
            raise ClientSetupError(f"{variable}={url!r} is not an API address: {problem}; "
                                   f"give one such as https://api.anthropic.com, or unset it")
    _check_custom_headers(environ.get(CUSTOM_HEADERS))
    if provider != "anthropic":
        check_cloud_environment(provider, environ)  # its region, project and credentials
        return
    for name in SECRET_VARIABLES:
        value = environ.get(name)
        odd = odd_character(value) if value else None
        if odd:  # where, never what: the value is a secret
            raise ClientSetupError(f"{name} holds {odd} (a stray character from a copy and paste?); "
                                   f"set it to the key alone: export {name}=sk-ant-...")


def _check_custom_headers(text: str | None) -> None:
    """Each `Name: value` line of ANTHROPIC_CUSTOM_HEADERS as the SDK splits it (at newlines; a line
    without a colon is skipped), a header HTTP can carry; the value is never shown (it may be a token)."""
    for number, line in enumerate((text or "").split("\n"), start=1):
        name, colon, value = line.partition(":")
        if not colon:
            continue
        name = name.strip()
        if not _HEADER_NAME.fullmatch(name):
            raise ClientSetupError(f"{CUSTOM_HEADERS}, line {number}: {name[:40]!r} is not a header name (letters, "
                                   "digits and -, such as X-Team); one `Name: value` a line")
        odd = odd_character(value.strip(), spaces=False)
        if odd or len(value) > 8192:
            why = f"holds {odd}" if odd else f"is {len(value):,} characters long"
            raise ClientSetupError(f"{CUSTOM_HEADERS}, line {number}: the value of {name} {why}; "
                                   "one `Name: value` a line")
