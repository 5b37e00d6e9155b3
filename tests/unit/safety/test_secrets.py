"""The API key and other credentials: kept from the agent's environment, redacted from any text."""

from __future__ import annotations

import os

import pytest

from orchestrator.safety.credentials import secrets as secrets_module
from orchestrator.safety.credentials.redaction import MIN_FRAGMENT_LENGTH, REDACTED, redact, redact_piece, redact_value
from orchestrator.safety.credentials.secrets import is_secret_name, known_secret_values, scrubbed_environment
from orchestrator.tools.truncation import elide_middle, head_of, join_head_tail, tail_of

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


# ---- a key cut in two ----------------------------------------------------------------------

# Not shaped like an Anthropic key: only the known value can find its fragments.
PLAIN = "corp-gateway-token-7f3a9c51e2d84b06a1c3"


def _fragments_in(text: str, secret: str) -> list[int]:
    """Offsets of the `MIN_FRAGMENT_LENGTH`-character fragments of `secret` found in `text`."""
    size = MIN_FRAGMENT_LENGTH
    return [i for i in range(len(secret) - size + 1) if secret[i:i + size] in text]


def test_a_fragment_of_a_known_secret_at_a_cut_is_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", PLAIN)
    tail = PLAIN[10:] + " and then the build passed"
    head = "the build used " + PLAIN[:20]
    assert redact_piece(tail, starts_at_cut=True) == REDACTED + " and then the build passed"
    assert redact_piece(head, ends_at_cut=True) == "the build used " + REDACTED
    # Only at a cut: the same text elsewhere is ordinary text, and short fragments stay.
    assert redact_piece(tail) == tail
    assert redact_piece(PLAIN[-15:] + " rest", starts_at_cut=True) == PLAIN[-15:] + " rest"
    # A piece lying wholly inside the secret, cut at both ends.
    assert redact_piece(PLAIN[5:30], starts_at_cut=True, ends_at_cut=True) == REDACTED
    # Whole values inside the piece are redacted as always.
    assert redact_piece(f"x {PLAIN} y {PLAIN[:18]}", ends_at_cut=True) == f"x {REDACTED} y {REDACTED}"


def test_an_anthropic_shaped_key_cut_short_at_the_end_is_redacted() -> None:
    # A key we do not know, cut after its prefix: whatever is left of it goes.
    assert redact_piece("token sk-ant-api03-Ab", ends_at_cut=True) == "token " + REDACTED
    assert redact_piece("token sk-ant-api03-Ab") == "token sk-ant-api03-Ab"


@pytest.mark.parametrize("secret_name,secret", [("ANTHROPIC_API_KEY", KEY), ("ANTHROPIC_AUTH_TOKEN", PLAIN)])
def test_truncation_never_leaves_a_fragment_of_a_secret_whatever_the_cut(
    monkeypatch: pytest.MonkeyPatch, secret_name: str, secret: str
) -> None:
    monkeypatch.setenv(secret_name, secret)
    limit = 200
    for offset in range(len(secret) + 1):
        # The key straddles the head's cut, then the tail's cut, at every offset.
        around_head = "h" * (limit // 2 - offset) + secret + "t" * 500
        around_tail = "h" * 500 + secret + "t" * (limit // 2 - len(secret) + offset)
        for text in (around_head, around_tail):
            assert _fragments_in(elide_middle(text, limit), secret) == [], offset
        assert _fragments_in(head_of(around_head, limit // 2), secret) == [], offset
        assert _fragments_in(tail_of(around_tail, limit // 2), secret) == [], offset
        # Head and tail kept from a stream whose middle was dropped: each may start or end inside the key.
        head, tail = ("h" * 50 + secret)[: 50 + offset], (secret + "t" * 50)[offset:]
        assert _fragments_in(join_head_tail(head, tail, limit, dropped=1000), secret) == [], offset


def test_redact_follows_a_change_of_the_key_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", PLAIN)
    assert redact(f"a {PLAIN}") == f"a {REDACTED}"
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "another-token-0123456789")
    assert redact(f"a {PLAIN} b another-token-0123456789") == f"a {PLAIN} b {REDACTED}"
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN")
    assert redact("b another-token-0123456789") == "b another-token-0123456789"


def test_redact_builds_its_secrets_once_while_the_environment_stays_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    built = []
    real = secrets_module.KnownSecrets
    monkeypatch.setattr(secrets_module, "KnownSecrets", lambda *args: built.append(args) or real(*args))
    event = {"message": f"401 for {KEY}", "details": [f"x{i}" for i in range(50)]}
    for _ in range(100):
        redact("plain text")
        redact_value(event)
    assert len(built) <= 1
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY + "x")
    assert redact(KEY + "x") == REDACTED and len(built) <= 2


def test_redact_value_reads_the_environment_once_per_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    reads = []
    real_get = os.environ.get
    monkeypatch.setattr(os.environ, "get", lambda *args: reads.append(args[0]) or real_get(*args), raising=False)
    redact_value({"a": ["x"] * 40, "b": {"c": "d", "e": ("f", "g")}})
    assert len(reads) <= len(secrets_module.SECRET_VALUE_VARIABLES) + 1  # and the credentials file's name


def test_the_start_of_a_command_shown_in_events_keeps_no_fragment_of_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    from orchestrator.tools.registry import summarize_input

    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", PLAIN)
    for offset in range(len(PLAIN)):
        command = "x" * (200 - offset) + PLAIN + " rest"
        summary = summarize_input("bash", {"command": command})
        assert _fragments_in(summary, PLAIN) == [], offset


def test_the_own_environ_block_loses_the_values_of_secret_variables_only() -> None:
    from orchestrator.safety.credentials.own_environ import _wipe_values

    block = bytearray(f"PATH=/bin\0ANTHROPIC_API_KEY={KEY}\0NOTE={KEY}\0HOME=/h\0".encode())
    wiped = _wipe_values(block, ("ANTHROPIC_*",))
    assert wiped == ["ANTHROPIC_API_KEY", "NOTE"]
    entries = bytes(block).split(b"\0")
    assert entries[0] == b"PATH=/bin" and b"HOME=/h" in entries and KEY.encode() not in bytes(block)
    assert len(block) == len(f"PATH=/bin\0ANTHROPIC_API_KEY={KEY}\0NOTE={KEY}\0HOME=/h\0")
