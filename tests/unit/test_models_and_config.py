"""Default models come from the installed SDK; configuration layers and their errors."""

from __future__ import annotations

import typing
from pathlib import Path

import pytest

from orchestrator.config import ConfigError, RunConfig
from orchestrator.config_layers import load_config
from orchestrator.llm.models import default_agent_model, default_summarizer_model, known_models, newest_model


def test_the_model_list_read_from_source_is_the_sdks_own():
    import anthropic.types.model as sdk_models

    listed = [lit for arg in typing.get_args(sdk_models.Model) for lit in typing.get_args(arg) if isinstance(lit, str)]
    assert known_models() == listed


def test_defaults_are_the_newest_sonnet_and_haiku():
    sonnets = [m for m in known_models() if m.startswith("claude-sonnet-") and not m[-8:].isdigit()]
    assert default_agent_model() in sonnets
    assert default_summarizer_model().startswith("claude-haiku-")
    assert newest_model("no-such-family", "fallback-id") == "fallback-id"


def test_flags_beat_environment_beat_file(tmp_path: Path):
    (tmp_path / "orchestrate.toml").write_text('max_turns = 11\nmodel = "from-file"\nmax_cost = 1.5\n')
    config = load_config({"max_turns": 33}, tmp_path, {"ORCHESTRATE_MODEL": "from-env"})
    assert (config.max_turns, config.model, config.max_cost) == (33, "from-env", 1.5)


def test_bad_settings_name_their_source(tmp_path: Path):
    (tmp_path / "orchestrate.toml").write_text("colour = 'blue'\n[security]\ndeny = 'rm'\n")
    with pytest.raises(ConfigError) as err:
        load_config({}, tmp_path, {"ORCHESTRATE_MAX_COST": "lots"})
    message = str(err.value)
    assert "unknown setting 'colour'" in message
    assert "ORCHESTRATE_MAX_COST" in message
    assert "security.deny" in message  # a list of regexes, not one string


def test_price_overrides_apply_by_model_then_family(tmp_path: Path):
    (tmp_path / "orchestrate.toml").write_text(
        '[pricing.sonnet]\ninput = 1\noutput = 2\ncache_read = 0.1\ncache_write = 1.25\n'
    )
    table = load_config({}, tmp_path, {}).price_table()
    assert table.price_for("claude-sonnet-9").output == 2
    assert table.price_for("claude-haiku-4-5").output == 5


FLOAT_SETTINGS = sorted(
    name for name, field in RunConfig.model_fields.items() if field.annotation in (float, float | None)
)


def test_there_are_number_settings_to_check():
    assert {"max_cost", "check_timeout", "retry_max_wait"} <= set(FLOAT_SETTINGS)


@pytest.mark.parametrize("setting", FLOAT_SETTINGS)
@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "1e309"])
def test_no_number_setting_accepts_a_value_that_is_not_finite(tmp_path: Path, setting: str, value: str):
    # From every layer: a flag (as click parses it, a float), the environment, the file.
    (tmp_path / "orchestrate.toml").write_text(f"{setting} = {value if value != '1e309' else 'inf'}\n")
    layers = [
        ({setting: float(value)}, {}, "command line"),
        ({}, {f"ORCHESTRATE_{setting.upper()}": value}, "environment"),
        ({}, {}, "orchestrate.toml"),
    ]
    for flags, environ, source in layers:
        with pytest.raises(ConfigError, match="not a finite number") as err:
            load_config(flags, tmp_path, environ)
        assert str(err.value).count("\n") == 1 and source in str(err.value)


def test_a_misspelt_key_gets_a_suggestion_at_any_depth(tmp_path: Path):
    (tmp_path / "orchestrate.toml").write_text("max_cots = 1\nsumarize_every = 2\nzzz = 1\n[security]\ndenny = []\n")
    with pytest.raises(ConfigError) as err:
        load_config({}, tmp_path, {})
    message = str(err.value)
    assert "unknown setting 'max_cots'; did you mean \"max_cost\"?" in message
    assert "unknown setting 'sumarize_every'; did you mean \"summarize_every\"?" in message
    assert "unknown setting 'security.denny'; did you mean \"deny\"?" in message
    assert "unknown setting 'zzz'\n" in message + "\n"  # nothing close: no guess
