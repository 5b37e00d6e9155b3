"""Resume without a sandbox believes `passed` only with the feature's log and its checkpoint.

The red team's run: the agent appended a forged `passed` line to the state journal and killed
the orchestrator; on resume a feature whose check is `false` was passed and the run exited 0.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any
from orchestrator.run.checks.trust import distrust_unproven_passes
from orchestrator.spec.load import load_spec
from orchestrator.store.paths import ProjectPaths
from orchestrator.store.run_state import FeatureState, RunState
from tests.cli_helpers import write_spec


# ---- the rule, one case at a time -----------------------------------------------------------


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True, capture_output=True)


def _setup(tmp_path: Path, *, git: bool) -> tuple[ProjectPaths, Any, RunState]:
    root = tmp_path / "project"
    root.mkdir()
    if git:
        _git(root, "init", "-q")
    spec = load_spec(write_spec(tmp_path, 1, verify="true")).spec
    state = RunState(features={"feat-01": FeatureState(status="passed", attempts=1)})
    return ProjectPaths.for_project(root), spec, state


def _doubted(paths: ProjectPaths, spec: Any, state: RunState, checkpoints: bool = True) -> list[str]:
    warnings: list[str] = []
    doubted = distrust_unproven_passes(state, spec, paths, checkpoints=checkpoints, on_warning=warnings.append)
    assert len(warnings) == len(doubted)
    return doubted


def test_passes_true_in_the_spec_is_the_users_word(tmp_path: Path) -> None:
    paths, spec, state = _setup(tmp_path, git=False)
    spec.features[0].passes = True
    assert _doubted(paths, spec, state) == []
