"""Nothing the agent writes changes the run's configuration or its accounting.

`orchestrate.toml` sets the next run's sandbox, limits and prices: the agent's commands and
the code its checks run may not change it. In the sandbox it is read-only; without one a
change is put back and the attempt fails, saying why. A price of 0 in the price table is a
configuration error (exit 2), never a crash.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fake_messages_api.scripted_agent.plans import bash, edit_create, report
from tests.cli_helpers import read_json, run_cli, write_spec
from tests.e2e.safety.test_sandbox import bwrap_problem
from tests.git_helpers import init_repo

USER_CONFIG = "max_turns = 12\n"
# Written so that no shell rule can tell: the name is put together at run time.
FORGE_CONFIG = (
    "python3 -c \"import pathlib; pathlib.Path('orchest' + 'rate.toml').write_text("
    "'sandbox = \\\"none\\\"\\n[pricing.sonnet]\\ninput = 0.000001\\noutput = 0.000001\\n"
    "cache_read = 0.000001\\ncache_write = 0.000001\\n')\""
)


def _project(tmp_path: Path, config: str | None) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    if config is not None:
        (project / "orchestrate.toml").write_text(config)
    return project


def _reason(project: Path) -> str:
    return str(read_json(project / ".autonomous" / "logs" / "feat-01.json")["verification"]["error"])


@pytest.mark.parametrize("config", [USER_CONFIG, None], ids=["user-file", "no-file"])
def test_an_agent_rewriting_the_config_without_a_sandbox_is_undone_and_fails(
    fake_api: Any, tmp_path: Path, config: str | None
) -> None:
    project = _project(tmp_path, config)
    fake_api.plans["feat-01"] = [
        [bash(FORGE_CONFIG)], [edit_create("features/feat-01.txt", "done\n")], [report("Implemented feat-01")],
    ]
    spec = write_spec(tmp_path, 1)

    result = run_cli(["run", str(spec), "--sandbox", "none", "--max-attempts", "1"], project, fake_api)

    assert result.code == 1, result.stdout + result.stderr
    if config is None:
        assert not (project / "orchestrate.toml").exists()
    else:
        assert (project / "orchestrate.toml").read_text() == config
    assert "orchestrate.toml (the run's configuration)" in _reason(project)


def test_under_jobs_an_agent_creating_the_config_in_its_worktree_is_undone(fake_api: Any, tmp_path: Path) -> None:
    project = init_repo(tmp_path / "project")
    (project / "orchestrate.toml").write_text(USER_CONFIG)  # the user's, untracked: the worktrees lack it
    fake_api.plans["feat-01"] = [
        [bash(FORGE_CONFIG)], [edit_create("features/feat-01.txt", "done\n")], [report("Implemented feat-01")],
    ]
    spec = write_spec(tmp_path, 2)

    result = run_cli(["run", str(spec), "--jobs", "2", "--sandbox", "none", "--max-attempts", "1"], project, fake_api)

    assert result.code == 1, result.stdout + result.stderr
    assert (project / "orchestrate.toml").read_text() == USER_CONFIG
    assert "orchestrate.toml (the run's configuration)" in _reason(project)


def test_a_check_rewriting_the_config_without_a_sandbox_is_undone_and_fails(fake_api: Any, tmp_path: Path) -> None:
    project = _project(tmp_path, USER_CONFIG)
    spec = write_spec(tmp_path, 1, verify=f"{FORGE_CONFIG}; test -f features/{{id}}.txt")

    result = run_cli(["run", str(spec), "--sandbox", "none", "--max-attempts", "1"], project, fake_api)

    assert result.code == 1, result.stdout + result.stderr
    assert (project / "orchestrate.toml").read_text() == USER_CONFIG
    assert "the check changed orchestrate.toml" in _reason(project)


@pytest.mark.skipif(bwrap_problem() is not None, reason=f"no usable sandbox: {bwrap_problem()}")
def test_in_the_sandbox_the_config_is_read_only(fake_api: Any, tmp_path: Path) -> None:
    project = _project(tmp_path, USER_CONFIG)
    fake_api.plans["feat-01"] = [
        [bash(FORGE_CONFIG)], [edit_create("features/feat-01.txt", "done\n")], [report("Implemented feat-01")],
    ]
    spec = write_spec(tmp_path, 1)

    result = run_cli(["run", str(spec), "--sandbox", "bwrap"], project, fake_api)

    assert result.code == 0, result.stdout + result.stderr
    assert (project / "orchestrate.toml").read_text() == USER_CONFIG
    tool_results = json.dumps([request.body for request in fake_api.agent_requests("feat-01")])
    assert "Read-only file system" in tool_results


def test_the_tools_refuse_to_write_the_config(fake_api: Any, tmp_path: Path) -> None:
    project = _project(tmp_path, USER_CONFIG)
    fake_api.plans["feat-01"] = [
        [edit_create("orchestrate.toml", 'sandbox = "none"\n')],
        [bash("echo 'final_verify = false' >> orchestrate.toml")],
        [edit_create("features/feat-01.txt", "done\n")], [report("Implemented feat-01")],
    ]
    spec = write_spec(tmp_path, 1)

    result = run_cli(["run", str(spec), "--sandbox", "none"], project, fake_api)

    assert result.code == 0, result.stdout + result.stderr
    assert (project / "orchestrate.toml").read_text() == USER_CONFIG
    tool_results = json.dumps(fake_api.agent_requests("feat-01")[-1].body)  # the whole conversation
    assert tool_results.count("orchestrate.toml is the run's configuration") == 2


def test_a_price_of_zero_is_a_configuration_error(fake_api: Any, tmp_path: Path) -> None:
    prices = "[pricing.sonnet]\ninput = 3\noutput = 0\ncache_read = 0.3\ncache_write = 3.75\n"
    project = _project(tmp_path, prices)
    spec = write_spec(tmp_path, 1)

    result = run_cli(["run", str(spec), "--max-cost", "0.30"], project, fake_api)

    assert result.code == 2, result.stdout + result.stderr
    assert "sonnet.output = 0" in result.stderr and "above 0" in result.stderr
    assert "Traceback" not in result.stderr and fake_api.calls == 0
