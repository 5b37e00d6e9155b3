"""Git repositories for end-to-end tests: a project with a commit, clones of a bare remote."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path


def git(cwd: Path, *args: str) -> str:
    """Run git in `cwd`; its stdout, stripped. Raises on failure."""
    result = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return result.stdout.strip()


def init_repo(path: Path, files: dict[str, str] | None = None) -> Path:
    """A repository at `path` on branch main with one commit holding `files`."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "Dev Eloper")
    git(path, "config", "user.email", "dev@example.com")
    for name, text in (files or {"README.md": "widget\n"}).items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path


def clone(remote: Path, path: Path) -> Path:
    """A clone of `remote` at `path` with a test identity."""
    git(remote.parent, "clone", "-q", str(remote), str(path))
    git(path, "config", "user.name", "CI Runner")
    git(path, "config", "user.email", "ci@example.com")
    return path


def subjects(repo: Path, rev: str = "HEAD") -> list[str]:
    """Commit subjects of `rev`, oldest first."""
    return git(repo, "log", "--reverse", "--format=%s", rev).splitlines()


def wait_for_checkpoint(root: Path, feature_id: str, seconds: float = 60.0) -> None:
    """Wait (at most `seconds`) until `feature_id`'s checkpoint is on `root`'s branch: a fake agent
    that holds its first answer so makes its feature land after that one."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if any(subject.startswith(f"orchestrate: {feature_id}:") for subject in subjects(root)):
            return
        time.sleep(0.1)
