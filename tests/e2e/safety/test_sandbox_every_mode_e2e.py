"""Every command and mode runs the model's checks in the sandbox: none can forget it.

One check, the same in each mode, tries to write a file outside the project (where
`$ESCAPE_TO` points) and fails when it cannot. With `--sandbox bwrap` the write fails in
`run` (serial, `--jobs`, `--branch`, `--shard`), `combine`, `plan`, `validate --run-checks` and
`verify`, and nothing appears on the host. The control run without a sandbox shows the check
really writes there when it can, so each case above proves the sandbox stopped it.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from fake_messages_api.scripted_agent.forced_tools import ScriptedToolAnswers
from tests.cli_helpers import run_cli, write_spec
from tests.e2e.safety.test_sandbox import bwrap_problem
from tests.git_helpers import clone, git, init_repo

pytestmark = [
    pytest.mark.skipif(bwrap_problem() is not None, reason=f"no usable sandbox: {bwrap_problem()}"),
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
    pytest.mark.slow,
]

# Passes where it cannot escape only when $ESCAPE_TO is unset: a run without it builds the state.
ESCAPING_CHECK = 'if [ -n "$ESCAPE_TO" ]; then echo escaped > "$ESCAPE_TO" || exit 1; fi; test -f features/{id}.txt'
BWRAP = ("--sandbox", "bwrap")


def _world(tmp_path: Path, features: int = 1) -> tuple[Path, Path, Path]:
    """A git project, its spec (beside it, as users keep one) and the outside directory."""
    repo = init_repo(tmp_path / "project")
    spec = write_spec(tmp_path, features, verify=ESCAPING_CHECK)
    outside = tmp_path / "outside"
    outside.mkdir()
    return repo, spec, outside


def _escape(outside: Path, mode: str) -> dict[str, str]:
    return {"ESCAPE_TO": str(outside / f"{mode}.txt"), "ORCHESTRATE_MAX_ATTEMPTS": "1"}


def _assert_contained(outside: Path, mode: str, result: Any) -> None:
    assert not (outside / f"{mode}.txt").exists(), f"{mode}: a check wrote outside the project\n{result.stderr}"


def test_without_a_sandbox_the_check_does_write_outside(fake_api: Any, tmp_path: Path) -> None:
    repo, spec, outside = _world(tmp_path)
    result = run_cli(["run", str(spec), "--sandbox", "none"], repo, fake_api, **_escape(outside, "control"))
    assert result.code == 0, result.stderr
    assert (outside / "control.txt").read_text() == "escaped\n"


@pytest.mark.parametrize(
    "mode, flags",
    [("serial", ()), ("jobs", ("--jobs", "2")), ("branch", ("--branch", "work")), ("shard", ("--shard", "1/2"))],
)
def test_run_in_every_mode_keeps_the_check_inside(fake_api: Any, tmp_path: Path, mode: str, flags: tuple[str, ...]) -> None:
    repo, spec, outside = _world(tmp_path, features=2)
    result = run_cli(["run", str(spec), *flags, *BWRAP], repo, fake_api, **_escape(outside, mode))
    assert result.code == 1, result.stdout + result.stderr  # the check could not write: it failed
    _assert_contained(outside, mode, result)


def test_verify_keeps_the_check_inside(fake_api: Any, tmp_path: Path) -> None:
    repo, spec, outside = _world(tmp_path)
    assert run_cli(["run", str(spec), *BWRAP], repo, fake_api).code == 0
    result = run_cli(["verify", *BWRAP], repo, fake_api, **_escape(outside, "verify"))
    assert result.code == 1, result.stdout + result.stderr
    _assert_contained(outside, "verify", result)


def test_validate_run_checks_keeps_the_check_inside(fake_api: Any, tmp_path: Path) -> None:
    repo, spec, outside = _world(tmp_path)
    (repo / "features").mkdir()
    (repo / "features" / "feat-01.txt").write_text("already here\n")  # so only the escape can fail it
    result = run_cli(["validate", str(spec), "--run-checks", *BWRAP], repo, fake_api, **_escape(outside, "validate"))
    assert result.code == 0, result.stderr
    assert "red" in result.stdout and "1 red" in result.stdout, result.stdout
    _assert_contained(outside, "validate", result)


def test_combine_keeps_the_check_inside(fake_api: Any, tmp_path: Path) -> None:
    seed, spec, outside = _world(tmp_path)
    remote = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(seed), str(remote))
    shard = clone(remote, tmp_path / "shard")
    assert run_cli(["run", str(spec), "--shard", "1/1", *BWRAP], shard, fake_api).code == 0
    artifact = tmp_path / "artifact"
    assert run_cli(["export", str(artifact)], shard, fake_api).code == 0
    final = clone(remote, tmp_path / "final")
    result = run_cli(["combine", str(spec), str(artifact), *BWRAP], final, fake_api, **_escape(outside, "combine"))
    assert result.code == 1, result.stdout + result.stderr  # its re-check failed on the combined tree
    _assert_contained(outside, "combine", result)


def test_plan_keeps_the_model_written_check_inside(fake_api: Any, tmp_path: Path) -> None:
    project, outside = tmp_path / "project", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    (tmp_path / "DESCRIPTION.md").write_text("# Calc\n\nA module calc.py with add(a, b), tested with pytest.\n")
    leak = outside / "plan.txt"
    imported = outside / "plan-import.txt"
    test_file = f"open({str(imported)!r}, 'w').write('escaped')\n\ndef test_add():\n    from calc import add\n"
    fake_api.tool_answers = ScriptedToolAnswers({
        "submit_spec": [{"project": "calc", "description": "A calculator.", "features": [{
            "id": "calc-add", "name": "Addition", "category": "core", "description": "add in calc.py.",
            "acceptance": ["add works"], "verify": "python3 -m pytest -q tests/test_add.py",
        }]}],
        "submit_checks": [{"files": [{"path": "tests/test_add.py", "content": test_file}],
                           "verify": f"echo escaped > {leak}; python3 -m pytest -q -p no:cacheprovider tests/test_add.py"}],
    })
    result = run_cli(["plan", str(tmp_path / "DESCRIPTION.md"), "--write-checks", *BWRAP], project, fake_api)
    assert result.code in (0, 1), result.stderr
    assert (project / "spec.json").is_file()
    assert not leak.exists() and not imported.exists(), result.stderr
