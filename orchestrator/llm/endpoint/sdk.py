"""The SDK client, built from the credentials in the environment (none is ever written anywhere).

`--provider anthropic` uses `anthropic.Anthropic` (ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN);
`bedrock` the SDK's `AnthropicBedrock` (AWS_REGION and the AWS credential chain, or
AWS_BEARER_TOKEN_BEDROCK); `vertex` its `AnthropicVertex` (CLOUD_ML_REGION,
ANTHROPIC_VERTEX_PROJECT_ID, and Google application default credentials, or a ready token in
GOOGLE_OAUTH_ACCESS_TOKEN). Each SDK client reads its own base-URL variable
(ANTHROPIC_BASE_URL, ANTHROPIC_BEDROCK_BASE_URL, ANTHROPIC_VERTEX_BASE_URL).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import anthropic

from orchestrator.json_types import SdkOptions
from orchestrator.llm.client_settings import ALL_MODEL_SETTINGS, ClientSettings, ModelSettingName
from orchestrator.llm.endpoint.endpoint_env import check_endpoint_environment
from orchestrator.llm.endpoint.providers import UnknownModelMapping, resolve_model
from orchestrator.llm.errors import ClientSetupError
from orchestrator.llm.streaming import LibraryWarnings, SdkClient

VERTEX_TOKEN_VARIABLE = "GOOGLE_OAUTH_ACCESS_TOKEN"
_HINTS = {
    "anthropic": "check ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN",
    "bedrock": "check the AWS credentials (AWS_PROFILE, AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, or "
    "AWS_BEARER_TOKEN_BEDROCK) and that the account has access to the model in AWS_REGION",
    "vertex": "check the Google credentials (gcloud auth application-default login, GOOGLE_APPLICATION_CREDENTIALS "
    f"or {VERTEX_TOKEN_VARIABLE}) and ANTHROPIC_VERTEX_PROJECT_ID",
}


def _note(line: str) -> None:
    print(f"orchestrate: note: {line}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Credentials:
    """Either the API key or the auth token (the other is None)."""

    api_key: str | None = None
    auth_token: str | None = None


def credentials_hint(provider: str) -> str:
    """What to check when `provider` refuses the credentials."""
    return _HINTS.get(provider, _HINTS["anthropic"])


def api_credentials(environ: Mapping[str, str] | None = None) -> Credentials:
    """The key or token from the environment; ClientSetupError with instructions when absent."""
    env = os.environ if environ is None else environ
    if env.get("ANTHROPIC_API_KEY"):
        return Credentials(api_key=env["ANTHROPIC_API_KEY"])
    if env.get("ANTHROPIC_AUTH_TOKEN"):
        return Credentials(auth_token=env["ANTHROPIC_AUTH_TOKEN"])
    raise ClientSetupError(
        "no API key: set ANTHROPIC_API_KEY (export ANTHROPIC_API_KEY=sk-ant-...) or ANTHROPIC_AUTH_TOKEN; "
        "--dry-run needs none"
    )


def check_model_ids(
    client: ClientSettings, settings: tuple[ModelSettingName, ...] = ALL_MODEL_SETTINGS,
    notice: Callable[[str], None] = _note,
) -> None:
    """Each model of `settings` has an id on the provider; ClientSetupError naming the one that has
    none; a notice for each that another model stands in for."""
    for name in settings:
        model, setting = client.model_setting(name), "--" + name.replace("_", "-")
        if model is None:
            continue
        try:
            resolved = resolve_model(client.provider, model)
        except UnknownModelMapping:
            raise ClientSetupError(f"{setting}: {UnknownModelMapping(client.provider, model, setting)}") from None
        if resolved.notice:
            notice(f"{setting}: {resolved.notice}")


def make_sdk_client(settings: ClientSettings, models: tuple[ModelSettingName, ...] = ALL_MODEL_SETTINGS) -> SdkClient:
    """The SDK client of `settings.provider`, after checking the ids of the `models` settings the
    command will use, and the provider's credentials."""
    check_model_ids(settings, models)
    check_endpoint_environment(settings.provider, os.environ)
    LibraryWarnings.install()  # the SDK's warnings, one note line each, never its raw text
    common: SdkOptions = {"max_retries": settings.api_max_retries, "timeout": settings.api_timeout}
    if settings.provider == "bedrock":
        return _bedrock_client(common)
    if settings.provider == "vertex":
        return _vertex_client(common)
    credentials = api_credentials()
    return anthropic.Anthropic(api_key=credentials.api_key, auth_token=credentials.auth_token, **common)


def _require(module: str, extra: str) -> None:
    try:
        found = importlib.util.find_spec(module) is not None
    except ImportError:  # its parent package (google) is missing too
        found = False
    if not found:
        raise ClientSetupError(f"--provider {extra} needs {module}: pip install 'orchestrate[{extra}]'")


def _bedrock_client(common: SdkOptions) -> anthropic.AnthropicBedrock:
    env = os.environ
    if not env.get("AWS_BEARER_TOKEN_BEDROCK"):
        _require("boto3", "bedrock")
        boto3 = importlib.import_module("boto3")  # untyped, and only there with the bedrock extra
        try:
            found = boto3.Session().get_credentials()
        except Exception as err:  # botocore's own (a profile that is not there, a broken config file)
            raise ClientSetupError(f"--provider bedrock: {' '.join(str(err).split())}; {_HINTS['bedrock']}") from None
        if found is None:
            raise ClientSetupError(f"--provider bedrock: no AWS credentials found; {_HINTS['bedrock']}")
    try:
        return anthropic.AnthropicBedrock(**common)
    except ValueError as err:  # no region
        raise ClientSetupError(f"--provider bedrock: {err} (export AWS_REGION=us-east-1, say)") from None


def _vertex_client(common: SdkOptions) -> anthropic.AnthropicVertex:
    env = os.environ
    token = env.get(VERTEX_TOKEN_VARIABLE) or None
    if token is None:
        _require("google.auth", "vertex")
    if not env.get("ANTHROPIC_VERTEX_PROJECT_ID") and token is not None:
        raise ClientSetupError("--provider vertex: set ANTHROPIC_VERTEX_PROJECT_ID to the Google Cloud project")
    try:
        return anthropic.AnthropicVertex(access_token=token, **common)
    except ValueError as err:  # no region
        raise ClientSetupError(f"--provider vertex: {err} (export CLOUD_ML_REGION=us-east5, say)") from None
