"""Type and lint checks, run by the test command itself so that `.ci/run` fails on either.

mypy (strict, configured in pyproject.toml) and ruff come with the `test` extra.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_mypy_strict_passes_on_both_packages():
    result = _run("mypy")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_passes_on_both_packages():
    result = _run("ruff", "check")
    assert result.returncode == 0, result.stdout + result.stderr
