"""A check command of any shape runs; none stops the run. A `python3 -c` script longer than a
file name once stopped every run with exit 3 ("could not write the run's files ([Errno 36] File
name too long)"): reading the command for the files it names asked the disk about the script."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.cli_helpers import read_json, run_cli, write_spec
from tests.git_helpers import init_repo

# 300 characters and more, one shell word: no file system takes it as a name.
LONG_CHECK = 'python3 -c "import pathlib, sys; ' + "".join(
    f"part_{n} = pathlib.Path('features', 'feat-01.txt'); " for n in range(6)
) + "sys.exit(0 if part_5.is_file() and part_0.read_text().strip() else 1)\""
ODD_CHECK = "cat <<'EOF' | python3 - && test -f features/feat-02.txt\nimport sys\n" + "x = 1  # ' unbalanced\n" * 40 + "EOF"


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_checks_of_any_shape_run_and_pass(fake_api: Any, tmp_path: Path, jobs: str) -> None:
    assert len(LONG_CHECK) > 300
    project = tmp_path / "project"
    project.mkdir()
    init_repo(project)
    spec = write_spec(tmp_path, 2, extra={"feat-01": {"verify": LONG_CHECK}, "feat-02": {"verify": ODD_CHECK}})

    result = run_cli(["run", str(spec), "--jobs", jobs], project, fake_api)

    assert result.code == 0, result.stdout + result.stderr
    assert "could not write" not in result.stderr and "internal error" not in result.stderr
    for feature in ("feat-01", "feat-02"):
        log = read_json(project / ".autonomous" / "logs" / f"{feature}.json")
        assert log["status"] == "passed" and log["verification"]["success"] is True


def test_a_pytest_check_that_replaces_pythonpath_says_so(fake_api: Any, tmp_path: Path) -> None:
    """Found by the real-project corpus: `PYTHONPATH=src pytest` drops the path orchestrate's
    pytest probe is on, and pytest stops (exit 4) before any test: the failure says why."""
    project = tmp_path / "project"
    init_repo(project, {"tests/test_one.py": "def test_one():\n    assert True\n"})
    check = "PYTHONPATH=src python3 -m pytest -q tests/test_one.py"
    spec = write_spec(tmp_path, 1, verify=check, extra={"feat-01": {"max_attempts": 1}})

    result = run_cli(["run", str(spec)], project, fake_api)

    assert result.code == 1, result.stdout + result.stderr
    error = read_json(project / ".autonomous" / "logs" / "feat-01.json")["verification"]["error"]
    assert "sets PYTHONPATH itself" in error and "PYTHONPATH=src:$PYTHONPATH" in error
    assert "sets PYTHONPATH itself" in result.stdout
