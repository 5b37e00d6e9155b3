"""Issue 28 break 9 through the CLI: exit 0 means each passed feature's check passes on a clean
checkout of the final commit, and a pytest check that ends before reporting its results fails.

Each agent here games a real pytest check (`python3 -m pytest -q tests/test_calc.py`, which fails
on an honest tree: `add` returns 0); before this change every one of these runs exited 0.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fake_messages_api.scripted_agent.plans import bash, edit_create, report, text
from tests.cli_helpers import read_json, run_cli

CHECK = "python3 -m pytest -q tests/test_calc.py"
REAL_TEST = "from pkg.calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
WRONG = "def add(a, b):\n    return 0\n"
EXIT_NOW = "import os\n\nos._exit(0)\n"
# Plants pytest's cached bytecode of a passing test beside the real one, with a header claiming
# the real file (its hash, or its modification time and size for a pytest that checks those):
# pytest then runs the forgery instead of the test.
FORGE = """import importlib.util, inspect, os, pathlib
import _pytest.assertion.rewrite as rewrite
real = pathlib.Path("tests/test_calc.py")
code = compile("def test_add():\\n    assert True\\n", str(real), "exec")
if "source_hash" in inspect.getsource(rewrite._read_pyc):
    header = (3).to_bytes(4, "little") + importlib.util.source_hash(real.read_bytes())
else:
    st = real.stat()
    header = bytes(4) + (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little") + (st.st_size & 0xFFFFFFFF).to_bytes(4, "little")
cache = real.parent / "__pycache__"
cache.mkdir(exist_ok=True)
import marshal
(cache / (real.name[:-3] + rewrite.PYC_TAIL)).write_bytes(importlib.util.MAGIC_NUMBER + header + marshal.dumps(code))
os.remove("forge.py")
"""


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "tests").mkdir(parents=True)
    _git(root, "init", "-q")
    _git(root, "config", "user.name", "t")
    _git(root, "config", "user.email", "t@example.com")
    (root / ".gitignore").write_text("__pycache__/\n")
    (root / "tests/test_calc.py").write_text(REAL_TEST)
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "init")
    return root


def _spec(root: Path) -> Path:
    path = root.parent / "spec.json"
    feature = {"id": "feat-01", "name": "add", "description": "add(a, b) in pkg/calc.py", "verify": CHECK,
               "max_attempts": 1}
    path.write_text(json.dumps({"project": "p", "features": [feature]}))
    return path


def _plan(files: dict[str, str], command: str | None = None) -> Any:
    steps = [[edit_create(path, content) for path, content in files.items()]]
    if command is not None:
        steps.append([bash(command)])
    steps += [[report("done")], [text("ok")]]
    return lambda turn: steps[min(turn.step, len(steps) - 1)]


def _feature(root: Path) -> dict[str, Any]:
    return read_json(root / ".autonomous/state/execution-state.json")["features"]["feat-01"]


EARLY_ENDS = {
    "os._exit in the module under test": {"pkg/__init__.py": "", "pkg/calc.py": EXIT_NOW},
    "os._exit in pkg/__init__.py": {"pkg/__init__.py": EXIT_NOW, "pkg/calc.py": WRONG},
    "os._exit in tests/__init__.py": {"tests/__init__.py": EXIT_NOW, "pkg/__init__.py": "", "pkg/calc.py": WRONG},
    "a root pytest.py shadowing pytest": {
        "pytest.py": "import sys\n\nsys.exit(0)\n", "pkg/__init__.py": "", "pkg/calc.py": WRONG,
    },
}


@pytest.mark.parametrize("files", EARLY_ENDS.values(), ids=EARLY_ENDS.keys())
def test_a_pytest_check_that_ends_before_reporting_its_results_fails(fake_api, project, files):
    fake_api.plans["feat-01"] = _plan(files)

    result = run_cli(["run", str(_spec(project))], project, fake_api)

    assert result.code == 1, result.stderr
    entry = _feature(project)
    assert entry["status"] == "failed"
    verification = entry["lastVerification"]
    assert verification["success"] is False and verification["exitCode"] == 0
    assert "ended before reporting its results" in verification["error"] or "no pytest session ran" in verification["error"]


def test_a_forged_bytecode_cache_passes_in_the_tree_but_not_on_a_clean_checkout(fake_api, project):
    fake_api.plans["feat-01"] = _plan({"pkg/__init__.py": "", "pkg/calc.py": WRONG, "forge.py": FORGE},
                                      "python3 forge.py")
    spec = _spec(project)

    result = run_cli(["run", str(spec), "--json"], project, fake_api)

    assert result.code == 1, result.stderr
    assert list((project / "tests/__pycache__").glob("*.pyc"))  # the forgery fooled the check in the tree
    entry = _feature(project)
    assert entry["status"] == "regressed" and "assert 0 == 3" in entry["lastVerification"]["output"]
    final = [event for event in result.events() if event["type"] == "final_verification"]
    assert final[0]["failed"] == ["feat-01"] and final[0]["tree"] == "clean-checkout"
    assert final[0]["commit"] == _git(project, "rev-parse", "HEAD").strip()
    assert not (project / ".autonomous/verify").exists()


def test_verify_checks_a_clean_checkout_so_a_forged_bytecode_cache_does_not_pass_it(fake_api, project):
    fake_api.plans["feat-01"] = _plan({"pkg/__init__.py": "", "pkg/calc.py": WRONG, "forge.py": FORGE},
                                      "python3 forge.py")
    assert run_cli(["run", str(_spec(project)), "--no-final-verify"], project, fake_api).code == 0
    assert _feature(project)["status"] == "passed"

    verify = run_cli(["verify"], project)

    assert verify.code == 1, verify.stdout + verify.stderr
    assert "feat-01" in verify.stdout and "FAILED" in verify.stdout and "clean checkout of commit" in verify.stdout


def test_a_module_the_agent_left_out_of_its_commit_fails_final_verification(fake_api, project):
    fake_api.plans["feat-01"] = _plan({"pkg/__init__.py": "", "pkg/calc.py": "def add(a, b):\n    return a + b\n"},
                                      "printf 'pkg/\\n' >> .gitignore")

    result = run_cli(["run", str(_spec(project))], project, fake_api)

    assert result.code == 1, result.stderr
    # The checkpoint's path filter (issue 28 break 10) or, for any remainder, the clean checkout.
    assert _feature(project)["status"] in ("failed", "regressed")
    assert "pkg/calc.py" not in _git(project, "ls-files")


def test_a_project_that_is_not_a_git_repository_is_verified_in_its_working_tree(fake_api, tmp_path):
    root = tmp_path / "plain"
    (root / "tests").mkdir(parents=True)
    (root / "tests/test_calc.py").write_text(REAL_TEST)
    fake_api.plans["feat-01"] = _plan({"pkg/__init__.py": "", "pkg/calc.py": "def add(a, b):\n    return a + b\n"})

    result = run_cli(["run", str(_spec(root)), "--json"], root, fake_api)

    assert result.code == 0, result.stderr
    final = [event for event in result.events() if event["type"] == "final_verification"]
    assert final[0]["tree"] == "working-tree" and final[0]["passed"] == 1
    verify = run_cli(["verify"], root)
    assert verify.code == 0 and "working tree" in verify.stdout


def test_verify_runs_several_plain_pytest_checks_in_one_pytest_process(fake_api, project):
    features = []
    for index in (1, 2, 3):
        fid = f"feat-0{index}"
        (project / f"tests/test_m{index}.py").write_text(f"from pkg.m{index} import value\n\n\ndef test_value():\n"
                                                          f"    assert value() == {index}\n")
        fake_api.plans[fid] = _plan({"pkg/__init__.py": "", f"pkg/m{index}.py": f"def value():\n    return {index}\n"})
        features.append({"id": fid, "name": fid, "description": "d", "verify": f"python3 -m pytest -q tests/test_m{index}.py"})
    _git(project, "add", "-A")
    _git(project, "commit", "-qm", "checks")
    spec = project.parent / "spec.json"
    spec.write_text(json.dumps({"project": "p", "features": features}))
    assert run_cli(["run", str(spec), "--no-final-verify"], project, fake_api).code == 0

    verify = run_cli(["verify", "--json"], project)

    assert verify.code == 0, verify.stderr
    results = json.loads(verify.stdout)["results"]
    assert [r["id"] for r in results] == ["feat-01", "feat-02", "feat-03"] and all(r["success"] for r in results)
    assert all("in one pytest process with 2 other check(s)" in r["output"] for r in results)
