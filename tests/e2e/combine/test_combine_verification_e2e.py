"""`orchestrate combine`'s final verification: the combined tree, never the live one, with the
user's environment (the ignored files no run made) as a run's final verification and `verify` have.

Issue 40 break 7 for combine: its checks run in the integration worktree (in `.autonomous/`, inside
the project), so committed code could load an agent's ignored `build/impl.py` from the live tree by
a relative path (exit 0, a check that fails on a clean clone). Issue 41: the integration worktree
lacked the `*.egg-info` of the user's `pip install -e .`, so honest work ended `regressed`.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli_helpers import read_json, run_cli
from tests.e2e.run.checks.test_clean_verify_e2e import CHECK, REAL_TEST, _plan
from tests.e2e.run.checks.test_verification_checkout_e2e import EGG_TEST, HONEST, REACH_BACK, _bwrap_works
from tests.git_helpers import clone, git, init_repo

pytestmark = [pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"), pytest.mark.slow]


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    """A directory the sandbox does not hide on its own (not under /tmp or a home), as a user's
    work directory is: there the live tree would be readable to a check, were it not hidden."""
    base = Path(tempfile.mkdtemp(prefix="orchestrate-test-", dir="/var/tmp"))
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _remote(base: Path, files: dict[str, str]) -> Path:
    seed = init_repo(base / "seed", {".gitignore": "__pycache__/\n", "tests/test_calc.py": REAL_TEST, **files})
    remote = base / "remote.git"
    git(base, "clone", "-q", "--bare", str(seed), str(remote))
    return remote


def _spec(base: Path, check: str) -> Path:
    path = base / "spec.json"
    feature = {"id": "feat-01", "name": "add", "description": "add(a, b) in pkg/calc.py", "verify": check,
               "max_attempts": 1}
    path.write_text(json.dumps({"project": "p", "features": [feature]}))
    return path


def _shard(fake_api: Any, runner: Path, spec: Path, *options: str) -> Path:
    """`run --shard 1/1` and `export` in `runner`, on the shard's branch (so in the clone itself, as
    its ignored files are): the artifact."""
    git(runner, "checkout", "-q", "-b", "orchestrate/shard-1-of-1")
    ran = run_cli(["run", str(spec), "--shard", "1/1", *options], runner, fake_api)
    assert ran.code == 0, ran.stdout[-3000:] + ran.stderr
    artifact = runner.parent / "artifact"
    exported = run_cli(["export", str(artifact)], runner, fake_api)
    assert exported.code == 0, exported.stderr
    return artifact


def _feature(project: Path) -> dict[str, Any]:
    return dict(read_json(project / ".autonomous/state/execution-state.json")["features"]["feat-01"])


@pytest.mark.attack
@pytest.mark.skipif(not _bwrap_works(), reason="bubblewrap does not work here")
def test_a_shards_code_cannot_reach_back_into_the_live_tree_from_combines_final_verification(fake_api: Any, outside_tmp: Path) -> None:
    """Mode bwrap: the integration worktree is mounted where the live repository is, so relative and
    absolute paths both lead into the combined tree. (Without a sandbox, full access by the user's
    choice, the integration worktree inside the project is not a boundary.) The shard ran in the
    clone that combines, as on one machine: its agent's `build/impl.py` is in the live tree."""
    remote = _remote(outside_tmp, {})
    runner = clone(remote, outside_tmp / "runner")
    fake_api.plans["feat-01"] = _plan(
        {"build/impl.py": HONEST, "pkg/__init__.py": "", "pkg/calc.py": REACH_BACK.format(live=str(runner))},
        "printf 'build/\\n' >> .gitignore")
    spec = _spec(outside_tmp, CHECK)
    artifact = _shard(fake_api, runner, spec, "--sandbox", "bwrap", "--no-final-verify")
    assert (runner / "build/impl.py").is_file() and "build/impl.py" not in git(runner, "ls-files")

    combined = run_cli(["combine", str(spec), str(artifact), "--sandbox", "bwrap"], runner, fake_api)

    assert combined.code == 1, combined.stdout[-3000:] + combined.stderr
    entry = _feature(runner)
    assert entry["status"] == "regressed", entry
    assert "assert 0 == 3" in entry["lastVerification"]["output"]
    assert "build/impl.py" in entry["reason"] and "left out" in entry["reason"]  # said why it may fail there


def test_the_users_editable_install_is_carried_into_combines_final_verification(fake_api: Any, tmp_path: Path) -> None:
    """`pip install -e .` in the combining clone left `mylib.egg-info/` (ignored); the project's own
    test reads the version from it."""
    remote = _remote(tmp_path, {".gitignore": "__pycache__/\n*.egg-info/\n", "tests/test_version.py": EGG_TEST,
                                "mylib/__init__.py": ""})
    runner = clone(remote, tmp_path / "runner")
    fake_api.plans["feat-01"] = _plan({"pkg/__init__.py": "", "pkg/calc.py": HONEST})
    spec = _spec(tmp_path, "python3 -m pytest -q tests")
    combining = clone(remote, tmp_path / "combine")
    for project in (runner, combining):
        egg = project / "mylib.egg-info"
        egg.mkdir()
        (egg / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: mylib\nVersion: 1.2.3\n")
        (egg / "top_level.txt").write_text("mylib\n")
    artifact = _shard(fake_api, runner, spec)

    combined = run_cli(["combine", str(spec), str(artifact)], combining, fake_api)

    assert combined.code == 0, combined.stdout[-3000:] + combined.stderr
    assert _feature(combining)["status"] == "passed"
    assert "final verification: feat-01" not in combined.stdout + combined.stderr
