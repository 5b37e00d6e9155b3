"""The Bedrock and Vertex variables a user sets by hand, checked before any work.

The SDK's `AnthropicBedrock` and `AnthropicVertex` take the region, the project and the
credentials from the environment as they are: a region with a stray newline ends in a traceback
from the HTTP library when the client is built (the region is in its URL), a project id or a
token with one only at the first call. Each is one line here instead (a `ClientSetupError`,
exit 2), naming the variable and what to do; a secret's value is never shown.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from orchestrator.llm.errors import ClientSetupError

# A DNS label (the region is in the host name): us-east-1, us-east5, global.
_REGION = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
# A Google Cloud project id or number (my-project-123), or a domain-scoped one (example.com:my-project).
_PROJECT = re.compile(r"[a-z0-9][a-z0-9.:-]*")
_MAX_LABEL = 63
_MAX_PROJECT = 100
_MAX_SECRET = 16_384  # longer than any key or token an HTTP header carries to these APIs
_MAX_NAME = 256  # a profile's name
_MAX_PATH = 4096  # PATH_MAX

Kind = Literal["region", "project", "secret", "name", "file"]


@dataclass(frozen=True)
class CloudVariable:
    name: str
    kind: Kind
    example: str = ""


BEDROCK_VARIABLES = (
    CloudVariable("AWS_REGION", "region", "us-east-1"),
    CloudVariable("AWS_DEFAULT_REGION", "region", "us-east-1"),
    CloudVariable("AWS_PROFILE", "name"),
    CloudVariable("AWS_ACCESS_KEY_ID", "secret"),
    CloudVariable("AWS_SECRET_ACCESS_KEY", "secret"),
    CloudVariable("AWS_SESSION_TOKEN", "secret"),
    CloudVariable("AWS_BEARER_TOKEN_BEDROCK", "secret"),
)
VERTEX_VARIABLES = (
    CloudVariable("CLOUD_ML_REGION", "region", "us-east5"),
    CloudVariable("ANTHROPIC_VERTEX_PROJECT_ID", "project", "my-project-123"),
    CloudVariable("GOOGLE_OAUTH_ACCESS_TOKEN", "secret"),
    CloudVariable("GOOGLE_APPLICATION_CREDENTIALS", "file"),
)
CLOUD_VARIABLES = {"bedrock": BEDROCK_VARIABLES, "vertex": VERTEX_VARIABLES}


def odd_character(text: str, *, spaces: bool = True, unicode: bool = True) -> str | None:
    """The first character a header, a host name or a path component cannot hold as it is, described
    (`spaces`/`unicode`: whether whitespace and non-ASCII count as odd too; control characters always do)."""
    for position, char in enumerate(text):
        if not char.isprintable() or (spaces and char.isspace()) or (unicode and not char.isascii()):
            name = {"\n": "a newline", "\r": "a carriage return", "\t": "a tab", " ": "a space"}.get(char)
            return f"{name or f'the character {char!r}'} at position {position}"
    return None


def check_cloud_environment(provider: str, environ: Mapping[str, str]) -> None:
    """ClientSetupError for the first malformed variable of `provider`'s (bedrock, vertex) client."""
    for variable in CLOUD_VARIABLES.get(provider, ()):
        value = environ.get(variable.name)
        if value is None or (not value and variable.kind != "region"):
            continue  # unset, or empty where the SDK and its credential chain skip an empty one
        if variable.kind == "file" and environ.get("GOOGLE_OAUTH_ACCESS_TOKEN"):
            continue  # a ready token: the credentials file is not read
        problem = _problem(variable, value, provider)
        if problem:
            raise ClientSetupError(f"--provider {provider}: {problem}")


def _problem(variable: CloudVariable, value: str, provider: str) -> str | None:
    name = variable.name
    if variable.kind == "secret":  # where, never what
        odd = odd_character(value)
        if odd:
            return f"{name} holds {odd} (a stray character from a copy and paste?); set it to the value alone"
        if len(value) > _MAX_SECRET:
            return f"{name} is {len(value):,} characters long, longer than any credential; set it to the value alone"
        return None
    if variable.kind in ("name", "file"):
        odd = odd_character(value, spaces=False, unicode=False)
        if odd:
            return f"{name}={_shown(value)} holds {odd}; set it again without it"
        longest = _MAX_NAME if variable.kind == "name" else _MAX_PATH
        if len(value) > longest:
            return f"{name}={_shown(value)} is {len(value):,} characters long (at most {longest:,})"
        if variable.kind == "file" and not os.path.isfile(value):
            return f"{name}={_shown(value)} names no file; give the path of the credentials JSON file, or unset it"
        return None
    return _shape_problem(variable, value, provider)


def _shape_problem(variable: CloudVariable, value: str, provider: str) -> str | None:
    """A region or a project id: its own spelling, whatever it holds."""
    pattern, longest, what = (_REGION, _MAX_LABEL, "a region") if variable.kind == "region" else (
        _PROJECT, _MAX_PROJECT, "a Google Cloud project id")
    if not value:
        why = "it is set but empty"
    elif odd := odd_character(value):
        why = f"it holds {odd}"
    elif len(value) > longest:
        why = f"it is {len(value):,} characters long (at most {longest})"
    elif not pattern.fullmatch(value):
        why = "it holds a character other than lowercase letters, digits and hyphens" + (
            "" if variable.kind == "region" else " (and a domain-scoped id's dots and colon)")
    else:
        return None
    return f"{variable.name}={_shown(value)} is not {what}: {why}; give one such as {variable.example}, or unset it"


def _shown(value: str) -> str:
    """A value that is no secret, quoted with its control characters escaped, cut short if long."""
    return repr(value[:60]) + (f" (and {len(value) - 60:,} more characters)" if len(value) > 60 else "")
