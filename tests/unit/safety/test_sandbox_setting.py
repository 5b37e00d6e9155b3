"""The sandbox and variables a project's settings give, from plain values (no config, no
bubblewrap: `none`, and sandboxes built by hand)."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.safety.bubblewrap.sandbox import Sandbox
from orchestrator.safety.sandbox_setting import check_variables, project_environment, project_sandbox, showing


def test_mode_none_is_no_sandbox_whatever_else_is_asked(tmp_path: Path) -> None:
    sandbox = project_sandbox("none", tmp_path, read=["/data"], network=True, spec=tmp_path / "spec.json")
    assert sandbox.kind == "none" and not sandbox.active and sandbox.warning is None


def test_showing_adds_read_only_paths_after_the_sandbox_own(tmp_path: Path) -> None:
    sandbox = Sandbox("bwrap", "test", hidden=(Path("/home/u"),), read=(Path("/home/u/.venv"),))
    assert showing(sandbox, []) is sandbox
    shown = showing(sandbox, [Path("/home/u/acceptance")])
    assert shown.read == (Path("/home/u/.venv"), Path("/home/u/acceptance"))
    assert shown.hides(Path("/home/u/acceptance/test_x.py")) is None
    assert shown.hides(Path("/home/u/other")) == "hidden"


def test_check_variables_drop_secrets_and_name_the_spec_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLAIN_SETTING", "visible")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-" + "x" * 40)
    monkeypatch.setenv("DEPLOY_THING", "kept from the agent by the project's own pattern")
    (tmp_path / "specs").mkdir()
    variables = check_variables(tmp_path / "specs" / "spec.json", ["DEPLOY_*"])
    assert variables["PLAIN_SETTING"] == "visible"
    assert "ANTHROPIC_API_KEY" not in variables and "DEPLOY_THING" not in variables
    assert variables["ORCHESTRATE_SPEC_DIR"] == str((tmp_path / "specs").resolve())


def test_project_environment_says_the_warning_once_and_keeps_the_parts(tmp_path: Path) -> None:
    heard: list[str] = []
    quiet = project_environment(tmp_path, Sandbox("none", "asked for"), {"PATH": "/usr/bin"}, heard.append)
    assert heard == [] and quiet.workspace == tmp_path and dict(quiet.variables) == {"PATH": "/usr/bin"}
    warned = Sandbox("none", "auto: no bwrap", warning="no sandbox: bwrap is not installed")
    environment = project_environment(tmp_path, warned, {}, heard.append)
    assert heard == ["no sandbox: bwrap is not installed"] and environment.sandbox is warned
