"""The endpoint and key variables a user sets by hand: a malformed one is one line, before any work.

Property: whatever text ANTHROPIC_BASE_URL or the key holds, building the SDK client either
works or says what is wrong in a `ClientSetupError` (exit 2); never an exception from the HTTP
library (the 60-line traceback of a newline in the URL), never a URL the client takes but no
request could use. And every `ORCHESTRATE_*` setting, whatever its text, is a value or a
`ConfigError`.
"""

from __future__ import annotations

from pathlib import Path

import anthropic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orchestrator.config import ConfigError, RunConfig
from orchestrator.config_layers import FILE_ONLY, load_config
from orchestrator.llm.client_settings import ClientSettings
from orchestrator.llm.endpoint_env import check_endpoint_environment
from orchestrator.llm.errors import ClientSetupError
from orchestrator.llm.pricing import PriceTable
from orchestrator.llm.sdk import make_sdk_client

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
