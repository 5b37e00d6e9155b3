"""Verification checkouts through the CLI: outside the project, standing in for it in the sandbox,
with the user's environment (the ignored files no run made) and never the run's.

Issue 40 break 7: final verification's checkout lived in `.autonomous/verify/`, and its sandbox
left the live project readable, so committed code could load the agent's ignored `build/impl.py`
from the live tree (exit 0, a check that fails on a clean clone). Issue 41: the checkout lacked
the ignored files the user made before the run (an `*.egg-info` of `pip install -e .`), so honest
work ended `regressed`; and `verify` checked HEAD alone, passing a broken uncommitted file.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.run.checks.clean_checkout import checkout_base
from orchestrator.safety.bubblewrap.sandbox import probe_bwrap
from tests.cli_helpers import cli_env, orchestrate_command, run_cli
from tests.e2e.run.checks.test_clean_verify_e2e import CHECK, REAL_TEST, _feature, _plan

HONEST = "def add(a, b):\n    return a + b\n"
# The committed module finds the agent's code in the live tree: beside itself there (`../build`),
# from the old checkout in `.autonomous/verify/` (`../../../build`), or by the live path itself.
REACH_BACK = """import importlib.util
import pathlib

here = pathlib.Path(__file__).resolve().parent
for candidate in (here / "../build/impl.py", here / "../../../build/impl.py", pathlib.Path({live!r}) / "build/impl.py"):
    if candidate.exists():
        spec = importlib.util.spec_from_file_location("impl", candidate)
        impl = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(impl)
        add = impl.add
        break
else:
    def add(a, b):
        return 0
"""


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def _bwrap_works() -> bool:
    found = shutil.which("bwrap")
    return found is not None and probe_bwrap(found) is None


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    """A project directory the sandbox does not hide on its own (not under /tmp or a home), as a
    project in a user's work directory is."""
    base = Path(tempfile.mkdtemp(prefix="orchestrate-test-", dir="/var/tmp"))
    try:
        yield base / "project"
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _project(root: Path, ignore: str = "__pycache__/\n") -> Path:
    (root / "tests").mkdir(parents=True)
    _git(root, "init", "-q")
    _git(root, "config", "user.name", "t")
    _git(root, "config", "user.email", "t@example.com")
    (root / ".gitignore").write_text(ignore)
    (root / "tests/test_calc.py").write_text(REAL_TEST)
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "init")
    return root


def _spec(root: Path, check: str = CHECK) -> Path:
    path = root.parent / "spec.json"
    feature = {"id": "feat-01", "name": "add", "description": "add(a, b) in pkg/calc.py", "verify": check,
               "max_attempts": 1}
    path.write_text(json.dumps({"project": "p", "features": [feature]}))
    return path


MODES = [pytest.param("bwrap", marks=pytest.mark.skipif(not _bwrap_works(), reason="bubblewrap does not work here")),
         "none"]


@pytest.mark.attack
@pytest.mark.parametrize("sandbox", MODES)
def test_committed_code_cannot_reach_back_into_the_live_tree_from_final_verification(fake_api, outside_tmp, sandbox):
    """Every mode: with bubblewrap the live path itself leads into the checkout; without a sandbox
    (full access by the user's choice) the checkout is outside the project, so relative paths miss."""
    root = _project(outside_tmp)
    live = str(root) if sandbox == "bwrap" else "/nonexistent"
    fake_api.plans["feat-01"] = _plan(
        {"build/impl.py": HONEST, "pkg/__init__.py": "", "pkg/calc.py": REACH_BACK.format(live=live)},
        "printf 'build/\\n' >> .gitignore")

    result = run_cli(["run", str(_spec(root)), "--json", "--sandbox", sandbox], root, fake_api)

    assert result.code == 1, result.stdout[-3000:] + result.stderr
    entry = _feature(root)
    assert entry["status"] == "regressed", entry
    assert "assert 0 == 3" in entry["lastVerification"]["output"]
    assert "build/impl.py" in entry["reason"] and "left out" in entry["reason"]  # said why it may fail there
    assert "build/impl.py" not in _git(root, "ls-files") and (root / "build/impl.py").is_file()
    assert not (root / ".autonomous/verify").exists()


@pytest.mark.attack
@pytest.mark.skipif(not _bwrap_works(), reason="bubblewrap does not work here")
def test_verify_after_a_run_leaves_out_the_ignored_files_the_run_made(fake_api, outside_tmp):
    root = _project(outside_tmp)
    fake_api.plans["feat-01"] = _plan(
        {"build/impl.py": HONEST, "pkg/__init__.py": "", "pkg/calc.py": REACH_BACK.format(live=str(root))},
        "printf 'build/\\n' >> .gitignore")
    assert run_cli(["run", str(_spec(root)), "--no-final-verify"], root, fake_api).code == 0

    verify = run_cli(["verify"], root)

    assert verify.code == 1 and "assert 0 == 3" in verify.stdout, verify.stdout + verify.stderr
    assert "build/impl.py" in verify.stderr and "left out" in verify.stderr


EGG_TEST = "import importlib.metadata\n\n\ndef test_has_version():\n    assert importlib.metadata.version('mylib') == '1.2.3'\n"


def test_the_users_editable_install_is_carried_into_final_verification(fake_api, tmp_path):
    """`pip install -e .` before the run left `mylib.egg-info/` in the tree (ignored); the
    project's own test reads the version from it. It used to end `regressed`."""
    root = _project(tmp_path / "project", ignore="__pycache__/\n*.egg-info/\n")
    (root / "tests/test_version.py").write_text(EGG_TEST)
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "version test")
    egg = root / "mylib.egg-info"
    egg.mkdir()
    (egg / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: mylib\nVersion: 1.2.3\n")
    (egg / "top_level.txt").write_text("mylib\n")
    fake_api.plans["feat-01"] = _plan({"mylib/__init__.py": "", "pkg/__init__.py": "", "pkg/calc.py": HONEST})

    result = run_cli(["run", str(_spec(root, "python3 -m pytest -q tests")), "--json"], root, fake_api)

    assert result.code == 0, result.stdout[-3000:] + result.stderr
    final = [event for event in result.events() if event["type"] == "final_verification"]
    assert final[0]["tree"] == "clean-checkout" and final[0]["passed"] == 1
    assert run_cli(["verify"], root).code == 0


def test_verify_checks_what_you_have_and_committed_checks_head(fake_api, tmp_path):
    root = _project(tmp_path / "project")
    fake_api.plans["feat-01"] = _plan({"pkg/__init__.py": "", "pkg/calc.py": HONEST})
    assert run_cli(["run", str(_spec(root))], root, fake_api).code == 0
    (root / "pkg/calc.py").write_text("def add(a, b):\n    return a - b\n")  # broken, not committed
    status = _git(root, "status", "--porcelain")
    index = (root / ".git/index").read_bytes()

    mine = run_cli(["verify"], root)
    strict = run_cli(["verify", "--committed"], root)

    assert mine.code == 1 and "FAILED" in mine.stdout and "uncommitted changes" in mine.stdout, mine.stdout + mine.stderr
    assert strict.code == 0 and "--committed" in strict.stderr, strict.stdout + strict.stderr
    assert _git(root, "--no-optional-locks", "status", "--porcelain") == status
    assert (root / ".git/index").read_bytes() == index
    (root / "pkg/extra.py").write_text("")  # an untracked file goes in too
    data = json.loads(run_cli(["verify", "--json"], root).stdout)
    assert sorted(data["uncommitted"]) == ["pkg/calc.py", "pkg/extra.py"]


ACCEPTANCE = "from pkg.calc import add\n\n\ndef test_accepted():\n    assert add(2, 2) == 4\n"


@pytest.mark.skipif(not _bwrap_works(), reason="bubblewrap does not work here")
def test_a_check_file_kept_outside_the_project_is_readable_in_the_sandbox(fake_api, tmp_path):
    """Hidden acceptance tests in a directory of their own (here under /tmp, which the sandbox
    replaces with an empty one), neither in the project nor beside the spec."""
    root = _project(tmp_path / "project")
    accept = tmp_path / "acceptance"
    accept.mkdir()
    (accept / "test_accept.py").write_text(ACCEPTANCE)
    (tmp_path / "specs").mkdir()
    spec = _spec(root, f"python3 -m pytest -q -p no:cacheprovider {accept / 'test_accept.py'}")
    spec = spec.rename(tmp_path / "specs/spec.json")
    fake_api.plans["feat-01"] = _plan({"pkg/__init__.py": "", "pkg/calc.py": HONEST})

    result = run_cli(["run", str(spec), "--sandbox", "bwrap"], root, fake_api)

    assert result.code == 0, result.stdout[-3000:] + result.stderr
    assert run_cli(["verify", "--sandbox", "bwrap"], root).code == 0


@pytest.mark.skipif(not _bwrap_works(), reason="bubblewrap does not work here")
def test_a_check_file_kept_outside_the_project_is_read_only_in_the_sandbox(fake_api, tmp_path):
    """The check sees the file (its grep passes) and cannot change it: the check passes only if
    its append is refused, and the file is as it was after the run and `verify`."""
    root = _project(tmp_path / "project")
    outside = tmp_path / "acceptance" / "expected.txt"
    outside.parent.mkdir()
    outside.write_text("ok\n")
    spec = _spec(root, f"grep -q ok {outside} && ! (echo changed >> {outside}) 2>/dev/null")
    fake_api.plans["feat-01"] = _plan({"pkg/__init__.py": "", "pkg/calc.py": HONEST})

    result = run_cli(["run", str(spec), "--sandbox", "bwrap"], root, fake_api)

    assert result.code == 0, result.stdout[-3000:] + result.stderr
    assert run_cli(["verify", "--sandbox", "bwrap"], root).code == 0
    assert outside.read_text() == "ok\n"


@pytest.mark.skipif(not _bwrap_works(), reason="bubblewrap does not work here")
def test_a_check_naming_a_private_file_of_the_home_refuses_to_start_and_names_the_setting(fake_api, tmp_path):
    root = _project(tmp_path / "project")
    home = Path(os.environ["HOME"])  # the test's own (tests/conftest.py), which the CLI gets too
    (home / ".ssh").mkdir(exist_ok=True)
    (home / ".ssh/known_hosts").write_text("host\n")
    spec = _spec(root, f"grep -q host {home / '.ssh/known_hosts'}")

    result = run_cli(["run", str(spec), "--sandbox", "bwrap"], root, fake_api)

    assert result.code == 2, result.stdout + result.stderr
    said = [line for line in result.stderr.splitlines() if "known_hosts" in line]
    assert len(said) == 1 and "[sandbox] read" in said[0]
    assert fake_api.calls == 0  # refused before any model call


SLOW_WHEN_ASKED = "if [ -f slow ]; then touch started; sleep 20; fi; python3 -m pytest -q tests/test_calc.py"


@pytest.mark.parametrize("how", ["ctrl-c", "kill -9"])
def test_an_interrupted_verification_leaves_no_checkout_behind_past_the_next_one(fake_api, tmp_path, how):
    root = _project(tmp_path / "project")
    fake_api.plans["feat-01"] = _plan({"pkg/__init__.py": "", "pkg/calc.py": HONEST})
    assert run_cli(["run", str(_spec(root, SLOW_WHEN_ASKED))], root, fake_api).code == 0
    (root / "slow").write_text("")  # untracked: `verify` takes it into its checkout, `--committed` does not
    base, prefix = checkout_base(root)
    proc = subprocess.Popen(orchestrate_command("verify"), cwd=root, env=cli_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not list(base.glob(f"{prefix}*/started")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert list(base.glob(f"{prefix}*/started")), "the check never started"
    proc.send_signal(signal.SIGINT if how == "ctrl-c" else signal.SIGKILL)
    proc.communicate(timeout=30)

    if how == "ctrl-c":
        assert proc.returncode == 130 and not list(base.glob(f"{prefix}*"))
    else:
        assert list(base.glob(f"{prefix}*"))  # what a kill -9 leaves ...
        assert run_cli(["verify", "--committed"], root).code == 0
        assert not list(base.glob(f"{prefix}*"))  # ... the next verification removes
