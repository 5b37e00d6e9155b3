"""`orchestrate run` at its edges: --fresh in a git project, --dry-run of a project not yet
made, a shard with nothing in it."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


# --- --fresh keeps its backups out of git -------------------------------------------------


# --- --dry-run of a project directory that does not exist yet ----------------------------


def test_the_example_spec_readme_runs_as_written():
    # specs/textkit/README.md: `run` creates the project directory; a dry run needs none.
    readme = (Path(__file__).parents[3] / "specs/textkit/README.md").read_text()
    assert "must exist" not in readme and "creates /tmp/textkit if missing" in readme


# --- a shard with nothing in it ----------------------------------------------------------


