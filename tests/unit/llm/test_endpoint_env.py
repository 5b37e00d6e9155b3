"""The endpoint and key variables a user sets by hand: a malformed one is one line, before any work.

Property: whatever text ANTHROPIC_BASE_URL or the key holds, building the SDK client either
works or says what is wrong in a `ClientSetupError` (exit 2); never an exception from the HTTP
library (the 60-line traceback of a newline in the URL), never a URL the client takes but no
request could use. The same for Bedrock's and Vertex's region, project and credential
variables: a malformed value (a newline, a control character, a character no header or host
name holds, a value far too long) is one line naming it, before any work. And every `ORCHESTRATE_*` setting, whatever its text, is a value or a
`ConfigError`.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import anthropic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orchestrator.config import ConfigError, RunConfig
from orchestrator.config_layers import FILE_ONLY, load_config
from orchestrator.llm.client_settings import ClientSettings
from orchestrator.llm.costs.pricing import PriceTable
from orchestrator.llm.endpoint.cloud_env import CLOUD_VARIABLES, CloudVariable
from orchestrator.llm.endpoint.endpoint_env import check_endpoint_environment
from orchestrator.llm.endpoint.sdk import make_sdk_client
from orchestrator.llm.errors import ClientSetupError

ENV_TEXT = st.characters(exclude_characters="\x00", exclude_categories=["Cs"])  # what an environment can hold
URLISH = st.one_of(
    st.text(ENV_TEXT, max_size=40),
    st.builds(lambda head, tail: head + tail, st.sampled_from(["http://", "https://", "http://127.0.0.1:", ""]),
              st.text(ENV_TEXT, max_size=20)),
)


def _settings() -> ClientSettings:
    return ClientSettings(model="claude-sonnet-4-5", summarizer_model="claude-haiku-4-5", escalate_model=None,
                          provider="anthropic", max_output_tokens=1024, max_cost=None, max_feature_tokens=10_000,
                          api_timeout=5.0, api_max_retries=0, retry_attempts=1, retry_max_wait=0.0,
                          retry_deadline=5.0, jobs=1, prices=PriceTable({}))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(url=URLISH)
def test_any_base_url_builds_a_client_or_says_why(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
    try:
        client = make_sdk_client(_settings(), models=("model",))
    except ClientSetupError as err:
        assert "ANTHROPIC_BASE_URL" in str(err) and "\n" not in str(err)
        return
    assert isinstance(client, anthropic.Anthropic)
    assert client.base_url.scheme in ("http", "https") and client.base_url.host


def test_a_newline_in_the_base_url_is_named() -> None:
    with pytest.raises(ClientSetupError, match=r"ANTHROPIC_BASE_URL='http://127.0.0.1:9\\n' .*a newline"):
        check_endpoint_environment("anthropic", {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9\n"})
    with pytest.raises(ClientSetupError, match="does not start with http"):
        check_endpoint_environment("anthropic", {"ANTHROPIC_BASE_URL": "127.0.0.1:8080"})


@settings(max_examples=200, deadline=None)
@given(key=st.text(min_size=1, max_size=30))
def test_a_key_the_http_header_cannot_carry_is_named_without_its_value(key: str) -> None:
    try:
        check_endpoint_environment("anthropic", {"ANTHROPIC_API_KEY": "sk-ant-" + key})
    except ClientSetupError as err:
        assert "ANTHROPIC_API_KEY holds" in str(err) and "sk-ant-" + key not in str(err)
        return
    ("x-api-key: sk-ant-" + key).encode("ascii")  # what the header must be


@pytest.mark.parametrize("name", [name for name in RunConfig.model_fields if name not in FILE_ONLY])
def test_every_setting_from_the_environment_is_a_value_or_a_config_error(name: str, tmp_path: Path) -> None:
    @settings(max_examples=30, deadline=None)
    @given(value=st.text(min_size=1, max_size=30))
    def probe(value: str) -> None:
        try:
            load_config({}, tmp_path, {"ORCHESTRATE_" + name.upper(): value})
        except ConfigError:
            pass

    probe()


# ---- Bedrock's and Vertex's own variables ------------------------------------------------------

CLOUD_ENV = {
    "bedrock": {"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "AKIAFAKEFAKEFAKE0001", "AWS_SECRET_ACCESS_KEY": "s3cr3t",
                "AWS_EC2_METADATA_DISABLED": "true", "ANTHROPIC_BEDROCK_BASE_URL": "http://127.0.0.1:9"},
    "vertex": {"CLOUD_ML_REGION": "us-east5", "ANTHROPIC_VERTEX_PROJECT_ID": "my-project-123",
               "GOOGLE_OAUTH_ACCESS_TOKEN": "ya29.token"},
}
CLOUD_CASES = [(provider, variable) for provider, variables in CLOUD_VARIABLES.items() for variable in variables]
# What a copy and paste or a broken script leaves: a control character, a newline, a space, a
# character no header or host name may hold, somewhere in a value that may be fine around it.
_BAD_CHAR = st.sampled_from(["\n", "\r", "\t", " ", "\x1b", "\x7f", "\x85", "é", "\u200b", "\u2028", "😀"])
MALFORMED = st.one_of(
    st.builds(lambda head, bad, tail: head + bad + tail, st.text(ENV_TEXT, max_size=12), _BAD_CHAR,
              st.text(ENV_TEXT, max_size=12)),
    st.builds(lambda char, n: char * n, st.sampled_from(["a", "7"]), st.integers(20_000, 40_000)),  # very long
)


def _cloud_client(provider: str, name: str, value: str, monkeypatch: pytest.MonkeyPatch) -> object:
    for variable, good in CLOUD_ENV[provider].items():
        monkeypatch.setenv(variable, good)
    if name == "GOOGLE_APPLICATION_CREDENTIALS":
        monkeypatch.delenv("GOOGLE_OAUTH_ACCESS_TOKEN")  # it is read only without a ready token
    monkeypatch.setenv(name, value)
    return make_sdk_client(replace(_settings(), provider=provider), models=("model",))


@pytest.mark.parametrize(("provider", "variable"), CLOUD_CASES, ids=[v.name for _, v in CLOUD_CASES])
def test_every_malformed_cloud_variable_is_one_line_before_any_work(
    provider: str, variable: CloudVariable, monkeypatch: pytest.MonkeyPatch,
) -> None:
    @settings(max_examples=15, deadline=None)
    @given(value=MALFORMED)
    def probe(value: str) -> None:
        if variable.kind in ("name", "file") and value.isprintable() and len(value) < 20_000:
            return  # a profile's name or a path may hold spaces and letters of any script
        with monkeypatch.context() as env, pytest.raises(ClientSetupError) as refused:
            _cloud_client(provider, variable.name, value, env)
        said = str(refused.value)
        assert said.startswith(f"--provider {provider}: {variable.name}") and "\n" not in said, said
        assert len(said) < 400, said
        if variable.kind == "secret" and len(value) > 3:  # the message may name the bad character itself
            assert value not in said

    probe()


@pytest.mark.parametrize(("provider", "variable"), CLOUD_CASES, ids=[v.name for _, v in CLOUD_CASES])
def test_any_cloud_variable_builds_a_client_or_says_why(
    provider: str, variable: CloudVariable, monkeypatch: pytest.MonkeyPatch,
) -> None:
    @settings(max_examples=15, deadline=None)
    @given(value=st.one_of(st.text(ENV_TEXT, max_size=30), st.just(variable.example)))
    def probe(value: str) -> None:
        with monkeypatch.context() as env:
            try:
                client = _cloud_client(provider, variable.name, value, env)
            except ClientSetupError as err:
                assert "\n" not in str(err)
                return
        assert isinstance(client, (anthropic.AnthropicBedrock, anthropic.AnthropicVertex))
        assert client.base_url.scheme in ("http", "https") and client.base_url.host

    probe()


def test_a_region_project_and_credentials_file_are_named_as_such(tmp_path: Path) -> None:
    with pytest.raises(ClientSetupError, match=r"CLOUD_ML_REGION='us-east5\\n' is not a region: it holds a newline"):
        check_endpoint_environment("vertex", {"CLOUD_ML_REGION": "us-east5\n"})
    with pytest.raises(ClientSetupError, match="ANTHROPIC_VERTEX_PROJECT_ID='My Project' is not a Google Cloud project"):
        check_endpoint_environment("vertex", {"ANTHROPIC_VERTEX_PROJECT_ID": "My Project"})
    with pytest.raises(ClientSetupError, match=r"GOOGLE_APPLICATION_CREDENTIALS=.* names no file"):
        check_endpoint_environment("vertex", {"GOOGLE_APPLICATION_CREDENTIALS": str(tmp_path / "missing.json")})
    with pytest.raises(ClientSetupError, match=r"AWS_SECRET_ACCESS_KEY holds a newline at position 3"):
        check_endpoint_environment("bedrock", {"AWS_SECRET_ACCESS_KEY": "abc\n"})
    check_endpoint_environment("bedrock", {"AWS_REGION": "eu-central-1", "AWS_PROFILE": "my profile"})
    check_endpoint_environment("vertex", {"CLOUD_ML_REGION": "global", "ANTHROPIC_VERTEX_PROJECT_ID": "example.com:p-1"})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(headers=st.one_of(st.text(ENV_TEXT, max_size=40),
                         st.builds(lambda name, value: f"{name}: {value}", st.text(ENV_TEXT, max_size=10),
                                   st.text(ENV_TEXT, max_size=20))))
def test_any_custom_headers_build_a_client_that_can_send_them_or_say_why(
    headers: str, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("ANTHROPIC_CUSTOM_HEADERS", headers)
    try:
        client = make_sdk_client(_settings(), models=("model",))
    except ClientSetupError as err:
        assert str(err).startswith("ANTHROPIC_CUSTOM_HEADERS, line ") and "\n" not in str(err)
        return
    for name, value in client.default_headers.items():  # what goes on the wire: HTTP's rules
        assert re.fullmatch(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+", name), name
        assert not isinstance(value, str) or (value.isascii() and value.isprintable()), (name, value)
