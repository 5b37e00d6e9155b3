"""A run state that says feat-01 passed, and the rule that decides on resume whether to believe
it (both halves of `test_resume_trust`)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from orchestrator.run.checks.trust import distrust_unproven_passes
from orchestrator.spec.load import load_spec
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.run_state import FeatureState, RunState
from tests.cli_helpers import write_spec


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True, capture_output=True)


def passed_feature(tmp_path: Path, *, git_repo: bool) -> tuple[ProjectPaths, Any, RunState]:
    """A one-feature spec and a state recording feat-01 as passed, in `tmp_path/project`."""
    root = tmp_path / "project"
    root.mkdir()
    if git_repo:
        git(root, "init", "-q")
    spec = load_spec(write_spec(tmp_path, 1, verify="true")).spec
    state = RunState(features={"feat-01": FeatureState(status="passed", attempts=1)})
    return ProjectPaths.for_project(root), spec, state


def doubted(paths: ProjectPaths, spec: Any, state: RunState, checkpoints: bool = True) -> list[str]:
    """The features the resume rule no longer believes passed (one warning each)."""
    warnings: list[str] = []
    found = distrust_unproven_passes(state, spec, paths, checkpoints=checkpoints, on_warning=warnings.append)
    assert len(warnings) == len(found)
    return found
