"""`orchestrate combine` takes a run's check settings: its checks (the merge queue's re-checks and
the final verification) run in the run's sandbox, and `--no-final-verify` / `final_verify` skips
the final verification as it does in a run.

The observable: feat-01's check also appends a line to a log outside the project (and never fails
for it), so the log counts the checks that ran unconfined; under bubblewrap there is none.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.cli_helpers import read_events, run_cli, write_spec
from tests.e2e.safety.test_sandbox import bwrap_problem
from tests.e2e.safety.test_sandbox_e2e import _broken_bwrap_path
from tests.git_helpers import clone, git, init_repo, subjects

pytestmark = [pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"), pytest.mark.slow]


def _outside_log(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir(exist_ok=True)
    return outside / "escaped.log"


def _spec(tmp_path: Path) -> Path:
    log = _outside_log(tmp_path)
    return write_spec(tmp_path, 2, extra={
        "feat-01": {"verify": f"test -f features/feat-01.txt && {{ echo ran >> {log} || true; }}"},
    })


def _shard_artifact(fake_api: Any, tmp_path: Path, spec: Path) -> tuple[Path, Path]:
    """The bare remote and one shard's artifact, built unconfined (its check runs leave no log)."""
    seed = init_repo(tmp_path / "seed")
    remote = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(seed), str(remote))
    runner = clone(remote, tmp_path / "runner")
    ran = run_cli(["run", str(spec), "--sandbox", "none"], runner, fake_api)
    assert ran.code == 0, ran.stderr
    artifact = tmp_path / "artifact"
    exported = run_cli(["export", str(artifact)], runner, fake_api)
    assert exported.code == 0, exported.stderr
    _outside_log(tmp_path).unlink(missing_ok=True)
    return remote, artifact


def _log_lines(tmp_path: Path) -> int:
    log = _outside_log(tmp_path)
    return len(log.read_text().splitlines()) if log.exists() else 0


def _events(project: Path, kind: str) -> list[dict[str, Any]]:
    return [event for event in read_events(project) if event["type"] == kind]


@pytest.mark.skipif(bwrap_problem() is not None, reason=f"no usable sandbox: {bwrap_problem()}")
def test_combine_runs_every_check_in_the_sandbox(fake_api: Any, tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    remote, artifact = _shard_artifact(fake_api, tmp_path, spec)

    unconfined = run_cli(["combine", str(spec), str(artifact), "--sandbox", "none"], clone(remote, tmp_path / "a"), fake_api)
    assert unconfined.code == 0, unconfined.stdout + unconfined.stderr
    ran_unconfined = _log_lines(tmp_path)
    assert ran_unconfined >= 2  # the observable works: the merge queue's re-check and the final verification
    _outside_log(tmp_path).unlink()

    confined_clone = clone(remote, tmp_path / "b")
    confined = run_cli(["combine", str(spec), str(artifact), "--sandbox", "bwrap"], confined_clone, fake_api)

    assert confined.code == 0, confined.stdout + confined.stderr
    assert _log_lines(tmp_path) == 0  # neither the re-checks nor the final verification got out
    assert len(subjects(confined_clone, "main")) == 1 + 2
    [final] = _events(confined_clone, "final_verification")
    assert final["checked"] == 2 and final["failed"] == []


def test_bwrap_asked_for_but_unusable_exits_2_and_combines_nothing(fake_api: Any, tmp_path: Path) -> None:
    project = init_repo(tmp_path / "combine")
    spec = write_spec(tmp_path, 1)

    result = run_cli(["combine", str(spec), str(tmp_path / "no-artifact"), "--sandbox", "bwrap"], project, fake_api,
                     PATH=_broken_bwrap_path(tmp_path))

    assert result.code == 2, result.stdout + result.stderr
    assert "--sandbox bwrap" in result.stderr and "No permissions to create new namespace" in result.stderr
    assert "--sandbox none" in result.stderr  # what to do next, as run and verify say it
    assert subjects(project, "main") == ["initial"] and not (project / ".autonomous" / "events.jsonl").exists()


def test_no_final_verify_skips_the_final_verification_as_a_run_does(fake_api: Any, tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    remote, artifact = _shard_artifact(fake_api, tmp_path, spec)
    verified_clone = clone(remote, tmp_path / "a")
    verified = run_cli(["combine", str(spec), str(artifact), "--sandbox", "none"], verified_clone, fake_api)
    assert verified.code == 0, verified.stdout + verified.stderr
    assert len(_events(verified_clone, "final_verification")) == 1
    with_final = _log_lines(tmp_path)
    _outside_log(tmp_path).unlink()

    # `auto` from the environment, with a bwrap that cannot run: warned once, as a run warns.
    skipped_clone = clone(remote, tmp_path / "c")
    skipped = run_cli(["combine", str(spec), str(artifact), "--no-final-verify"], skipped_clone, fake_api,
                      PATH=_broken_bwrap_path(tmp_path), ORCHESTRATE_SANDBOX="auto")

    assert skipped.code == 0, skipped.stdout + skipped.stderr
    assert "final verification skipped" in skipped.stdout
    assert _events(skipped_clone, "final_verification") == []
    assert _log_lines(tmp_path) == with_final - 1  # feat-01's check ran once less: no final verification
    assert (skipped.stdout + skipped.stderr).count("no sandbox:") == 1
    assert len(subjects(skipped_clone, "main")) == 1 + 2

    # The setting from the environment, as for a run (a re-run lands nothing: it only verifies).
    again = run_cli(["combine", str(spec), str(artifact), "--sandbox", "none"], skipped_clone, fake_api,
                    ORCHESTRATE_FINAL_VERIFY="false")
    assert again.code == 0, again.stdout + again.stderr
    assert "final verification skipped" in again.stdout and _events(skipped_clone, "final_verification") == []
    assert _log_lines(tmp_path) == with_final - 1
