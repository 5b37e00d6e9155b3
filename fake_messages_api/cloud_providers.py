"""Amazon Bedrock's and Google Vertex AI's shapes of the Messages API, served by the same fake.

The SDK's `AnthropicBedrock` posts to ``/model/{model}/invoke`` (streamed:
``invoke-with-response-stream``, answered in AWS event-stream frames) with the model in the path, no
``model`` in the body, ``anthropic_version`` (and ``anthropic_beta``) in the body, signed
with AWS Signature Version 4. `AnthropicVertex` posts to
``/projects/{project}/locations/{region}/publishers/anthropic/models/{model}:rawPredict``
(streamed: ``:streamRawPredict``, answered in server-sent events)
(count_tokens: ``.../models/count-tokens:rawPredict``, model in the body) with a Google
bearer token. `provider_call` turns such a request into the Messages API request it stands
for, so the rest of the fake answers it as it answers Anthropic's own API; `authenticate`
checks the provider's credentials: the SigV4 signature is recomputed with botocore from the
secret the fake knows, so a request signed with the wrong secret is refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from fake_messages_api.api_errors import ApiError, invalid_request

MESSAGES_PATH = "/v1/messages"
COUNT_TOKENS_PATH = "/v1/messages/count_tokens"
_BEDROCK = re.compile(r"^/model/(?P<model>[^/]+)/(?P<verb>invoke|invoke-with-response-stream)$")
_VERTEX = re.compile(
    r"^(?:/v1)?/projects/(?P<project>[^/]+)/locations/(?P<region>[^/]+)/publishers/anthropic/models/"
    r"(?P<model>[^/:]+):(?P<verb>rawPredict|streamRawPredict)$"
)
_SIGV4 = re.compile(
    r"^AWS4-HMAC-SHA256 Credential=(?P<key>[^/]+)/(?P<date>\d{8})/(?P<region>[^/]+)/(?P<service>[^/]+)/aws4_request, "
    r"SignedHeaders=(?P<signed>[a-z0-9;-]+), Signature=(?P<signature>[0-9a-f]{64})$"
)

# Credentials the fake accepts; tests set the same ones in the orchestrator's environment.
TEST_AWS_ACCESS_KEY = "AKIAFAKEFAKEFAKE0001"
TEST_AWS_SECRET_KEY = "fake/aws/secret/0123456789abcdefghijklmnopq"
TEST_VERTEX_TOKEN = "ya29.fake-vertex-access-token-0123456789"


@dataclass
class ProviderSettings:
    """What the fake's Bedrock and Vertex endpoints accept (change freely while it runs)."""

    aws_keys: dict[str, str] = field(default_factory=lambda: {TEST_AWS_ACCESS_KEY: TEST_AWS_SECRET_KEY})
    vertex_tokens: set[str] = field(default_factory=lambda: {TEST_VERTEX_TOKEN})


@dataclass
class ProviderCall:
    """A provider's request, read as the Messages API request it stands for."""

    provider: str  # "bedrock" | "vertex"
    api_path: str  # MESSAGES_PATH or COUNT_TOKENS_PATH
    body: Any  # the Messages API body: `model` back in, the provider's own keys out
    betas: list[str]
    problem: str | None = None  # the provider would refuse the body's shape (400)
    region: str | None = None
    project: str | None = None


def provider_call(method: str, path: str, body: Any) -> ProviderCall | None:
    """The provider request at `path`, or None for a path of Anthropic's own API."""
    bedrock, vertex = _BEDROCK.match(path), _VERTEX.match(path)
    if method != "POST" or not (bedrock or vertex) or not isinstance(body, dict):
        return None
    provider = "bedrock" if bedrock else "vertex"
    model = unquote((bedrock or vertex)["model"])  # type: ignore[index]
    clean = {k: v for k, v in body.items() if k not in ("anthropic_version", "anthropic_beta")}
    betas = body.get("anthropic_beta") or []
    problem = None
    if not isinstance(body.get("anthropic_version"), str):
        problem = "anthropic_version: Field required"
    api_path = MESSAGES_PATH
    if vertex and model == "count-tokens":
        api_path = COUNT_TOKENS_PATH
    elif "model" in body:
        problem = "model: Extra inputs are not permitted (the model is named in the URL)"
    else:
        clean = {"model": model, **clean}
    if (bedrock or vertex)["verb"] in ("invoke-with-response-stream", "streamRawPredict"):  # type: ignore[index]
        clean["stream"] = True  # Bedrock takes it out of the body; the path says it
    call = ProviderCall(provider, api_path, clean, list(betas) if isinstance(betas, list) else [], problem)
    if vertex:
        call.project, call.region = vertex["project"], vertex["region"]
    return call


def authenticate(settings: ProviderSettings, call: ProviderCall, method: str, target: str,
                 headers: dict[str, str], raw: bytes) -> None:
    """Raise the provider's 401/403 unless the request carries credentials it accepts."""
    if call.provider == "vertex":
        token = headers.get("authorization", "").removeprefix("Bearer ").strip()
        if token not in settings.vertex_tokens:
            raise ApiError(401, "Request had invalid authentication credentials.", "authentication_error")
        return
    _check_sigv4(settings, method, target, headers, raw)


def _check_sigv4(settings: ProviderSettings, method: str, target: str, headers: dict[str, str], raw: bytes) -> None:
    from botocore.auth import SigV4Auth  # type: ignore[import-untyped]
    from botocore.awsrequest import AWSRequest  # type: ignore[import-untyped]
    from botocore.credentials import Credentials  # type: ignore[import-untyped]

    match = _SIGV4.match(headers.get("authorization", ""))
    if match is None or "x-amz-date" not in headers:
        raise ApiError(403, "Missing Authentication Token", "permission_error")
    secret = settings.aws_keys.get(match["key"])
    if secret is None or match["service"] != "bedrock":
        raise ApiError(403, "The security token included in the request is invalid.", "permission_error")
    signed = {name: headers.get(name, "") for name in match["signed"].split(";")}
    request = AWSRequest(method=method, url=f"http://{headers.get('host', '')}{target}", headers=signed, data=raw)
    request.context["timestamp"] = headers["x-amz-date"]
    signer = SigV4Auth(Credentials(match["key"], secret, headers.get("x-amz-security-token")), "bedrock",
                       match["region"])
    expected = signer.signature(signer.string_to_sign(request, signer.canonical_request(request)), request)
    if expected != match["signature"]:
        raise ApiError(
            403, "The request signature we calculated does not match the signature you provided.", "permission_error"
        )


def require_version(call: ProviderCall) -> None:
    """The provider's shape rules (its `anthropic_version` in the body, the model in the URL)."""
    if call.problem:
        raise invalid_request(call.problem)
