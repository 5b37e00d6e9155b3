"""What a user sees of the command line itself: help, usage errors, bad settings.

Help names every value by what it is (SPEC, ID, N, PATH), every parser error reads like
every other error (`orchestrate: error: ...`, exit 2), and a number that is not finite is
refused before anything runs, whether it comes from a flag, the environment or the file.
"""

from __future__ import annotations

import pytest

from tests.cli_helpers import write_spec

# --- help ----------------------------------------------------------------------------------


# --- usage errors: one style ---------------------------------------------------------------


# --- numbers that are not finite -----------------------------------------------------------


# --- where errors become exit codes --------------------------------------------------------


def test_commands_raise_usage_errors_and_never_exit(project, monkeypatch):
    """The commands raise `UsageError`; `orchestrator.cli.commands` alone maps it to exit 2 (above)."""
    from orchestrator.commands.arguments import open_project, read_spec
    from orchestrator.commands.listing import print_logs, print_status
    from orchestrator.commands.run import RunRequest, run_command
    from orchestrator.config import ConfigError
    from orchestrator.config_layers import load_config
    from orchestrator.llm.errors import ClientSetupError
    from orchestrator.user_errors import EXIT_USAGE, UsageError

    assert issubclass(ConfigError, UsageError) and issubclass(ClientSetupError, UsageError) and UsageError.exit_code == EXIT_USAGE == 2
    paths = open_project(project)
    with pytest.raises(UsageError, match="no run state"):
        print_status(paths, False)
    with pytest.raises(UsageError, match="is not a feature id"):
        print_logs(paths, "../x")
    with pytest.raises(UsageError, match="does not exist"):
        open_project(project / "missing")
    (project / "bad.json").write_text("{")
    with pytest.raises(UsageError):
        read_spec(project / "bad.json")
    loaded = read_spec(write_spec(project, 2))
    config = load_config({}, project)
    with pytest.raises(UsageError, match="--reset: unknown feature id"):
        run_command(loaded, config, paths, RunRequest(resets=["nope"]))
    with pytest.raises(UsageError, match="--only"):
        run_command(loaded, config, paths, RunRequest(only="nope"))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    with pytest.raises(ClientSetupError, match="no API key"):
        run_command(loaded, config, paths, RunRequest())
