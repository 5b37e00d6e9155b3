"""The run package's seams, without a model: the strategy registry, the one build of a
feature's turn, and the verifier a feature job is given."""

from __future__ import annotations

from pathlib import Path

from orchestrator.run.checks.running.check_command import CheckVerifier
from tests.environments import unsandboxed


def test_the_check_verifier_runs_in_its_workspace(tmp_path: Path):
    (tmp_path / "marker.txt").write_text("here")
    verifier = CheckVerifier(unsandboxed(tmp_path), timeout=30)
    assert verifier.check("test -f marker.txt", 2).success
    failed = verifier.check("test -f missing.txt", 3)
    assert (failed.success, failed.attempt, failed.exit_code) == (False, 3, 1)
    assert verifier.check(None, 1).skipped
