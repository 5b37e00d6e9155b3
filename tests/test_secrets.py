"""The API key and other credentials: kept from the agent's environment, redacted from any text."""

from __future__ import annotations

import pytest

from orchestrator.secrets import (
    REDACTED,
    is_secret_name,
    known_secret_values,
    redact,
    redact_value,
    scrubbed_environment,
)

KEY = "sk-ant-api03-" + "Qw9_x-Yz" * 10


@pytest.fixture(autouse=True)
def no_real_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)


def test_the_scrubbed_environment_keeps_ordinary_variables_and_drops_secrets() -> None:
    base = {
        "PATH": "/usr/bin", "HOME": "/home/me", "LANG": "C.UTF-8", "VIRTUAL_ENV": "/venv", "CI": "true",
        "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": "http://x", "ANTHROPIC_AUTH_TOKEN": "tok-123456789",
        "GITHUB_TOKEN": "ghp_x", "GH_TOKEN": "x", "NPM_TOKEN": "x", "AWS_ACCESS_KEY_ID": "AKIA", "AWS_REGION": "eu",
        "DB_PASSWORD": "pw", "MY_SECRET": "s", "GOOGLE_APPLICATION_CREDENTIALS": "/k.json", "SSH_AUTH_SOCK": "/s",
        "OPENAI_API_KEY": "sk-x", "api_key": "lower", "HARMLESS_NAME": KEY,
    }
    clean = scrubbed_environment(base)
    assert clean == {"PATH": "/usr/bin", "HOME": "/home/me", "LANG": "C.UTF-8", "VIRTUAL_ENV": "/venv", "CI": "true"}


def test_a_value_equal_to_the_key_is_dropped_under_any_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "plain-key-without-prefix")
    clean = scrubbed_environment({"COPY": "plain-key-without-prefix", "URL": "https://u:plain-key-without-prefix@h",
                                  "OK": "fine"})
    assert clean == {"OK": "fine"}


def test_extra_patterns_are_globs_matched_in_any_case() -> None:
    base = {"DEPLOY_HOOK_URL": "x", "INTERNAL_SERVICE": "y", "KEEP": "z"}
    assert scrubbed_environment(base, extra_patterns=["*_hook_url", "internal_*"]) == {"KEEP": "z"}
    assert is_secret_name("my_token") and not is_secret_name("PATH")


def test_scrubbed_environment_defaults_to_os_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("SOME_VISIBLE_SETTING", "1")
    clean = scrubbed_environment()
    assert "ANTHROPIC_API_KEY" not in clean and clean["SOME_VISIBLE_SETTING"] == "1"


def test_redact_replaces_the_configured_key_and_anything_shaped_like_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "custom-token-abcdef")
    other = "sk-ant-admin01-" + "B" * 30
    text = f"auth failed for custom-token-abcdef; also {other} and {KEY}."
    assert redact(text) == f"auth failed for {REDACTED}; also {REDACTED} and {REDACTED}."
    assert known_secret_values() == ["custom-token-abcdef"]


def test_redact_with_given_secrets_and_harmless_text() -> None:
    assert redact("password hunter2-long in log", secrets=["hunter2-long"]) == f"password {REDACTED} in log"
    assert redact("the sk-ant-... prefix is documented") == "the sk-ant-... prefix is documented"
    assert redact("") == ""
    # Values too short to be credentials are not hunted through ordinary text.
    assert redact("a b c", secrets=["a"]) == "a b c"


def test_a_key_containing_another_secret_is_replaced_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "abcdefgh12345678")
    assert redact("x abcdefgh12345678 y", secrets=["abcdefgh"]) == f"x {REDACTED} y"


def test_redact_value_walks_json_like_data(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    event = {"type": "error", "message": f"401 for key {KEY}", "nested": [{"k": KEY}, (KEY, 3)], "n": 1, KEY: None}
    clean = redact_value(event)
    assert KEY not in repr(clean)
    assert clean["n"] == 1 and clean["nested"][1][1] == 3 and isinstance(clean["nested"][1], tuple)
