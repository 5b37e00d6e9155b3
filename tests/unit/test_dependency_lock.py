"""The test environment's lock (`requirements-test.txt`) and the jobs that use it.

The lock pins every dependency of the package and of its `test` extra, each pin inside the
range pyproject.toml declares and with its files' hashes, so `.ci/run` and the README's test
command install exactly what was tested; `.ci/newest` and the workflow's `newest` job test the
newest releases instead, so drift shows as a named failing job.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "requirements-test.txt"


def _pins() -> dict[str, tuple[str, int]]:
    """name -> (version, number of hashes), for every pin of the lock that applies on Linux."""
    text = LOCK.read_text(encoding="utf-8").replace("\\\n", " ")
    pins = {}
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        requirement = Requirement(line.split(" --hash")[0].strip())
        if requirement.marker is not None and not requirement.marker.evaluate({**default_environment(),
                                                                               "sys_platform": "linux"}):
            continue
        (version,) = [spec.version for spec in requirement.specifier if spec.operator == "=="]
        pins[canonicalize_name(requirement.name)] = (version, len(re.findall(r"--hash=sha256:[0-9a-f]{64}", line)))
    return pins


def test_the_lock_pins_every_dependency_inside_its_declared_range_with_hashes() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = [Requirement(text) for text in [*project["dependencies"], *project["optional-dependencies"]["test"]]]
    pins = _pins()
    for requirement in declared:
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{name} is not in {LOCK.name}: run `bash .ci/lock`"
        version, _hashes = pins[name]
        assert requirement.specifier.contains(version, prereleases=True), f"{name}=={version} is outside {requirement}"
    assert all(hashes for _, hashes in pins.values()), "every pin carries its hashes (pip then checks them all)"
    assert "pytest" in {canonicalize_name(Requirement(text).name) for text in project["dependencies"]}, (
        "pytest is a runtime dependency: the demo's checks and most Python specs' run `python3 -m pytest`")


def test_ci_installs_from_the_lock_into_a_new_virtualenv_every_run() -> None:
    script = "\n".join(line for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
                       if not line.lstrip().startswith("#"))
    assert "python3 -m venv" in script and "mktemp -d" in script
    assert "-r requirements-test.txt" in script
    assert "pip install" not in script.split("python3 -m venv", 1)[0], "nothing installed before the new venv"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "python3 -m pip install -r requirements-test.txt" in readme


def test_the_shipped_workflow_has_a_locked_job_and_a_newest_job() -> None:
    workflow = yaml.safe_load((ROOT / "examples" / "github" / "tests.yml").read_text(encoding="utf-8"))
    runs = {name: " ".join(step.get("run", "") for step in job["steps"]) for name, job in workflow["jobs"].items()}
    assert "bash .ci/run" in runs["locked"]
    assert "bash .ci/newest" in runs["newest"]
    newest = (ROOT / ".ci" / "newest").read_text(encoding="utf-8")
    assert "--upgrade" in newest and "requirements-test.txt" not in newest.split("set -uo", 1)[1]
