"""Issue 29 item 3: several plain pytest checks run as one pytest process, each verdict mapped back
to its feature, and one process per check whenever the combined run cannot settle it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from orchestrator.run.checks.running.check_command import run_check
from orchestrator.run.checks.running.check_pool import check_runner, run_checks
from tests.environments import unsandboxed

PYTEST = f"{sys.executable} -m pytest -q"
# Each test module notes the pid of the pytest process that imported it.
NOTE_PID = "import os\nwith open({log!r}, 'a') as f:\n    f.write(f'{{os.getpid()}}\\n')\n"


def _project(root: Path, count: int, failing: tuple[int, ...] = ()) -> list[tuple[str, str]]:
    log = root / "pids.txt"
    checks = []
    for index in range(1, count + 1):
        path = root / "tests" / f"test_f{index:02d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        verdict = "False" if index in failing else "True"
        path.write_text(NOTE_PID.format(log=str(log)) + f"\ndef test_it():\n    assert {verdict}\n\n\ndef test_more():\n    pass\n")
        checks.append((f"f{index:02d}", f"{PYTEST} tests/test_f{index:02d}.py"))
    return checks


def _processes(root: Path) -> int:
    return len(set((root / "pids.txt").read_text().split()))


def test_plain_pytest_checks_run_in_one_process_and_each_feature_gets_its_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # As in a user's virtualenv: the installed plugins (hypothesis, xdist, anyio) load in the
    # checks' pytest (the suite turns that off elsewhere, for speed: tests/conftest.py).
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    checks = _project(tmp_path, 8, failing=(3,))
    checks.append(("node", f"{PYTEST} tests/test_f04.py::test_more"))
    checks.append(("shell", "test -f tests/test_f01.py && echo shell"))
    # In the directory the batch names, but no check's: never collected.
    (tmp_path / "tests/test_unrelated.py").write_text("open('collected', 'w').close()\n")

    runs = {run.feature_id: run for run in run_checks(checks, tmp_path, check_runner(unsandboxed(tmp_path), 60.0), 1)}

    assert [fid for fid, run in runs.items() if not run.success] == ["f03"]
    # The failing one ran alone too: its result is exactly what the check gives by itself.
    assert runs["f03"].result.exit_code == 1 and "assert False" in runs["f03"].result.output
    assert "in one pytest process" in runs["f01"].result.output
    assert "shell" in runs["shell"].result.output
    assert _processes(tmp_path) == 2  # the combined run, then f03 alone (not 10 processes)
    assert not (tmp_path / "collected").exists()


def test_a_combined_run_that_does_not_report_falls_back_to_one_process_per_check(tmp_path: Path) -> None:
    checks = _project(tmp_path, 4)
    # The combined run ends before reporting; each check alone is fine.
    (tmp_path / "conftest.py").write_text(
        "import os, sys\nif '--continue-on-collection-errors' in sys.argv:\n    os._exit(0)\n"
    )

    runs = run_checks(checks, tmp_path, check_runner(unsandboxed(tmp_path), 60.0), 2)

    assert all(run.success for run in runs) and len(runs) == 4
    assert all("in one pytest process" not in run.result.output for run in runs)
    assert _processes(tmp_path) == 4


def test_a_check_the_combined_run_cannot_collect_runs_alone_and_passes(tmp_path: Path) -> None:
    # Two test modules of one name in directories without __init__.py: pytest cannot import both in
    # one process ("import file mismatch"), each works alone.
    checks = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "test_same.py").write_text("def test_it():\n    pass\n")
        checks.append((name, f"{PYTEST} {name}/test_same.py"))
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "test_other.py").write_text("def test_it():\n    pass\n")
    checks.append(("c", f"{PYTEST} c/test_other.py"))

    runs = {run.feature_id: run for run in run_checks(checks, tmp_path, check_runner(unsandboxed(tmp_path), 60.0), 1)}

    assert all(run.success for run in runs.values()), {f: r.result.output for f, r in runs.items()}
    assert "in one pytest process" in runs["a"].result.output + runs["b"].result.output
    assert "in one pytest process" in runs["c"].result.output


@pytest.mark.parametrize("planted, expected", [
    ({"pkg/__init__.py": "import os\nos._exit(0)\n"}, "ended before reporting its results"),
    ({"pytest.py": "import sys\nsys.exit(0)\n"}, "no pytest session ran"),
])
def test_a_pytest_check_that_reports_nothing_fails_whatever_its_exit_status(tmp_path: Path, planted, expected) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests/test_a.py").write_text("import pkg\n\n\ndef test_a():\n    assert False\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/__init__.py").write_text("")
    for name, content in planted.items():
        (tmp_path / name).write_text(content)

    result = run_check(f"{PYTEST} tests/test_a.py", unsandboxed(tmp_path), attempt=1, timeout=60)

    assert result.success is False and result.exit_code == 0 and expected in (result.error or "")


def test_a_pytest_started_by_a_test_may_fail_without_failing_the_check(tmp_path: Path) -> None:
    (tmp_path / "test_inner.py").write_text("def test_inner():\n    assert False\n")
    (tmp_path / "test_outer.py").write_text(
        "import subprocess, sys\n\n\ndef test_outer():\n"
        "    assert subprocess.run([sys.executable, '-m', 'pytest', '-q', 'test_inner.py']).returncode == 1\n"
    )

    result = run_check(f"{PYTEST} test_outer.py", unsandboxed(tmp_path), attempt=1, timeout=60)

    assert result.success, result.output
    assert not list(tmp_path.rglob("__pycache__")) and not (tmp_path / ".pytest_cache").exists()
