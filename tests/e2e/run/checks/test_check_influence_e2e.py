"""A check gamed through a file it does not name: recorded and warned about, refused with --strict-checks.

The scripted agent never writes the code. It adds a `tests/conftest.py` whose hook turns every
failing test into a pass, then reports. The check (`pytest tests/test_feature.py`) names
neither that file nor anything the agent touched, so the protected-file guard has nothing to
say. Without `--strict-checks` the run passes the feature, as the check's exit code says, but
the verification in the log, the state and the events records the conftest.py, and a warning
says so on stderr. With `--strict-checks` (or `strict_checks` in orchestrate.toml, or
`ORCHESTRATE_STRICT_CHECKS`) the attempt fails with an error naming the file, and the retry,
which leaves the file in place, fails as well.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fake_messages_api.scripted_agent.plans import edit_create, report
from tests.cli_helpers import first_prompt, read_events, read_json, run_cli, write_spec

REAL_TEST = "def test_feature():\n    from feature import answer\n    assert answer() == 42\n"
CHECK = "python3 -m pytest -q -p no:cacheprovider tests/test_feature.py"
EVERY_FAILURE_PASSES = '''import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        report.outcome = "passed"
'''
PLANTED = {"path": "tests/conftest.py", "kind": "conftest", "change": "added"}


def _project(tmp_path: Path, fake_api, max_attempts: int = 1) -> tuple[Path, Path]:
    project = tmp_path / "project"
    (project / "tests").mkdir(parents=True)
    (project / "tests/test_feature.py").write_text(REAL_TEST)
    fake_api.plans["feat-01"] = [
        [edit_create("tests/conftest.py", EVERY_FAILURE_PASSES)],
        [report("All tests pass now.")],
    ]
    spec = write_spec(project, 1, verify=CHECK, extra={"feat-01": {"max_attempts": max_attempts}})
    return project, spec


def test_without_strict_checks_the_gamed_pass_is_recorded_and_warned_about(fake_api, tmp_path: Path) -> None:
    project, spec = _project(tmp_path, fake_api)

    result = run_cli(["run", str(spec)], project, fake_api)

    # The hook made the failing test pass: the check's exit code says so, and the run believes it.
    assert result.code == 0, result.stderr
    assert not (project / "feature.py").exists()
    warning = [line for line in result.stderr.splitlines() if "tests/conftest.py" in line]
    assert warning and "warning" in warning[0] and "--strict-checks" in warning[0], result.stderr
    log = read_json(project / ".autonomous/logs/feat-01.json")
    assert log["status"] == "passed"
    assert log["verification"]["influencers"] == [PLANTED]
    assert log["attemptHistory"][0]["verification"]["influencers"] == [PLANTED]
    state = read_json(project / ".autonomous/state/execution-state.json")
    assert state["features"]["feat-01"]["lastVerification"]["influencers"] == [PLANTED]
    events = read_events(project)
    assert [e["influencers"] for e in events if e["type"] == "verification"] == [[PLANTED]]
    assert any(e["type"] == "warning" and e.get("influencers") == [PLANTED] for e in events)


@pytest.mark.parametrize("how", ["flag", "environment", "toml"])
def test_with_strict_checks_the_attempt_fails_and_the_retry_too_while_the_file_stays(
    fake_api, tmp_path: Path, how: str
) -> None:
    project, spec = _project(tmp_path, fake_api, max_attempts=2)
    args, extra = ["run", str(spec)], {}
    if how == "flag":
        args.append("--strict-checks")
    elif how == "environment":
        extra["ORCHESTRATE_STRICT_CHECKS"] = "1"
    else:
        (project / "orchestrate.toml").write_text("strict_checks = true\n")

    result = run_cli(args, project, fake_api, **extra)

    assert result.code == 1, result.stderr
    assert "Traceback" not in result.stderr
    log = read_json(project / ".autonomous/logs/feat-01.json")
    assert log["status"] == "failed" and log["attempts"] == 2
    for attempt in log["attemptHistory"]:
        verification = attempt["verification"]
        assert verification["success"] is False and verification["exitCode"] is None
        assert verification["influencers"] == [PLANTED]
        assert "--strict-checks" in verification["error"] and "tests/conftest.py" in verification["error"]
    # The retry is told why, in its Last Verification Result.
    retry_prompt = first_prompt(fake_api, "feat-01", 1)
    assert "tests/conftest.py" in retry_prompt and "--strict-checks" in retry_prompt
    assert "tests/conftest.py" in result.stderr and "fails this attempt" in result.stderr
