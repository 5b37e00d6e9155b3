"""Every failed check shows its output, wherever it ran (issue 41): a check that passed in the
tree and fails in final verification (a forged bytecode cache, dropped by the clean checkout) shows
its first meaningful lines on the console, in the feature log and `orchestrate logs ID`, the HTML
report, JUnit, the step summary and the prompt of the attempt that rebuilds it; `verify` does too."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from tests.cli_helpers import first_prompt, read_json, run_cli
from tests.e2e.run.checks.test_clean_verify_e2e import FORGE, REAL_TEST, WRONG, _plan, _spec
from tests.git_helpers import init_repo

# pytest's own line for the failed assertion: the meaningful line of the check's output.
SHOWN = "assert 0 == 3"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A repository whose honest check fails: `tests/test_calc.py` wants `add(1, 2) == 3`."""
    return init_repo(tmp_path / "project", {".gitignore": "__pycache__/\n", "tests/test_calc.py": REAL_TEST})


def _forged_run(fake_api: Any, project: Path, tmp_path: Path, *args: str) -> Any:
    fake_api.plans["feat-01"] = _plan({"pkg/__init__.py": "", "pkg/calc.py": WRONG, "forge.py": FORGE},
                                      "python3 forge.py")
    return run_cli(["run", str(_spec(project)), *args], project, fake_api,
                   GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md"))


def test_a_check_failing_in_final_verification_shows_its_output_everywhere(fake_api, project, tmp_path):
    result = _forged_run(fake_api, project, tmp_path, "--junit", str(tmp_path / "junit.xml"))

    assert result.code == 1, result.stdout + result.stderr
    log = read_json(project / ".autonomous/logs/feat-01.json")
    assert log["status"] == "regressed"
    events = [line for line in (project / ".autonomous/events.jsonl").read_text().splitlines()
              if '"final_verification"' in line]
    failure = ET.parse(tmp_path / "junit.xml").getroot().find(".//testcase[@name='feat-01']/failure")
    assert failure is not None
    page = run_cli(["report", "--html", str(tmp_path / "report.html")], project)
    assert page.code == 0, page.stderr
    surfaces = {
        "console": result.stdout + result.stderr,
        "the feature's reason (status, JUnit's message, the prompt)": log["reason"],
        "the feature log's verification": log["verification"]["output"],
        "the final_verification event": events[-1],
        "logs ID": run_cli(["logs", "feat-01"], project).stdout,
        "JUnit": (failure.text or "") + failure.get("message", ""),
        "the step summary": (tmp_path / "summary.md").read_text(),
        "the HTML report": (tmp_path / "report.html").read_text(),
    }
    assert [name for name, text in surfaces.items() if SHOWN not in text] == []

    fake_api.reset()
    fake_api.plans["feat-01"] = _plan({"pkg/calc.py": "def add(a, b):\n    return a + b\n"})
    again = run_cli(["run", str(_spec(project))], project, fake_api)
    assert again.code == 0, again.stdout + again.stderr
    prompt = first_prompt(fake_api, "feat-01")
    assert "The check run again on a later tree FAILED with exit code 1" in prompt
    assert SHOWN in prompt.split("Its first meaningful lines:")[1].split("```")[0]


def test_verify_shows_a_failed_checks_first_meaningful_lines(fake_api, project, tmp_path):
    assert _forged_run(fake_api, project, tmp_path, "--no-final-verify").code == 0

    verify = run_cli(["verify", "--junit", str(tmp_path / "verify.xml")], project)

    assert verify.code == 1, verify.stdout + verify.stderr
    assert SHOWN in verify.stdout
    assert SHOWN in (tmp_path / "verify.xml").read_text()
