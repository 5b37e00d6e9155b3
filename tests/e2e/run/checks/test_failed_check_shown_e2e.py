"""Every failed check shows its output, wherever it ran (issue 41): a check that passed in the
tree and fails in final verification (a forged bytecode cache, dropped by the clean checkout) shows
its first meaningful lines on the console, in the feature log and `orchestrate logs ID`, the HTML
report, JUnit, the step summary and the prompt of the attempt that rebuilds it; `verify` does too."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from tests.cli_helpers import first_prompt, read_json, run_cli
from tests.e2e.run.checks.test_clean_verify_e2e import FORGE, WRONG, _plan, _spec, project  # noqa: F401

# pytest's own line for the failed assertion: the meaningful line of the check's output.
SHOWN = "assert 0 == 3"


def _forged_run(fake_api: Any, project: Path, tmp_path: Path, *args: str) -> Any:
    fake_api.plans["feat-01"] = _plan({"pkg/__init__.py": "", "pkg/calc.py": WRONG, "forge.py": FORGE},
                                      "python3 forge.py")
    return run_cli(["run", str(_spec(project)), *args], project, fake_api,
                   GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md"))


def test_a_check_failing_in_final_verification_shows_its_output_everywhere(fake_api, project, tmp_path):
    result = _forged_run(fake_api, project, tmp_path, "--junit", str(tmp_path / "junit.xml"))

    assert result.code == 1, result.stdout + result.stderr
    console = result.stdout + result.stderr
    assert "final verification" in console and SHOWN in console, console
    log = read_json(project / ".autonomous/logs/feat-01.json")
    assert log["status"] == "regressed" and SHOWN in log["reason"] and SHOWN in log["verification"]["output"]
    events = [line for line in (project / ".autonomous/events.jsonl").read_text().splitlines()
              if '"final_verification"' in line]
    assert events and SHOWN in events[-1]  # the event keeps the output (bounded)
    shown_log = run_cli(["logs", "feat-01"], project)
    assert SHOWN in shown_log.stdout, shown_log.stdout
    junit = ET.parse(tmp_path / "junit.xml").getroot()
    failure = junit.find(".//testcase[@name='feat-01']/failure")
    assert failure is not None and SHOWN in (failure.text or "") + failure.get("message", "")
    assert SHOWN in (tmp_path / "summary.md").read_text()
    page = run_cli(["report", "--html", str(tmp_path / "report.html")], project)
    assert page.code == 0, page.stderr
    assert SHOWN in (tmp_path / "report.html").read_text()

    fake_api.reset()
    fake_api.plans["feat-01"] = _plan({"pkg/calc.py": "def add(a, b):\n    return a + b\n"})
    again = run_cli(["run", str(_spec(project))], project, fake_api)
    assert again.code == 0, again.stdout + again.stderr
    assert SHOWN in first_prompt(fake_api, "feat-01")  # the rebuilding attempt is told why


def test_verify_shows_a_failed_checks_first_meaningful_lines(fake_api, project, tmp_path):
    assert _forged_run(fake_api, project, tmp_path, "--no-final-verify").code == 0

    verify = run_cli(["verify", "--junit", str(tmp_path / "verify.xml")], project)

    assert verify.code == 1, verify.stdout + verify.stderr
    assert SHOWN in verify.stdout
    assert SHOWN in (tmp_path / "verify.xml").read_text()
