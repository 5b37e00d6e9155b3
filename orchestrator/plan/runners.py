"""Whether checks can be written: a test runner in the project, or one named in the description.

`orchestrate plan` writes each feature's check files by default only when it knows what will
run them; otherwise the user asks for it with `--write-checks`.
"""

from __future__ import annotations

import re
from pathlib import Path

# File -> the runner it shows; a file's content is read only where the name alone is not enough.
_RUNNER_FILES = {
    "pytest.ini": "pytest", "conftest.py": "pytest", "tox.ini": "pytest",
    "Cargo.toml": "cargo test", "go.mod": "go test", "Gemfile": "rspec",
}
_NAMED = re.compile(
    r"\b(pytest|unittest|jest|vitest|mocha|go test|cargo test|rspec|phpunit|npm test|junit)\b", re.IGNORECASE
)
DEFAULT_RUNNER = "pytest"


def project_runner(root: Path) -> str | None:
    """The test runner the project at `root` already uses, or None."""
    for name, runner in _RUNNER_FILES.items():
        if (root / name).is_file():
            return runner
    pyproject = _read(root / "pyproject.toml") + _read(root / "setup.cfg")
    if "pytest" in pyproject:
        return "pytest"
    package = _read(root / "package.json")
    if '"test"' in package:
        return "npm test"
    if (root / "tests").is_dir() or (root / "test").is_dir():
        return DEFAULT_RUNNER
    return None


def named_runner(description: str) -> str | None:
    """The test runner the description names, or None."""
    match = _NAMED.search(description)
    return match.group(1).lower() if match else None


def detect_runner(root: Path, description: str) -> str | None:
    """The runner the checks are written for: the project's, else the description's, else None."""
    return project_runner(root) or named_runner(description)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")[:100_000] if path.is_file() else ""
    except OSError:
        return ""
