"""Files an attempt hid from git: a check must not pass on files its checkpoint will leave out.

A checkpoint commits what git sees; an agent that appends its own module to `.gitignore` gets a
check that passes in the tree and a commit without the module (the check fails on a clean
checkout). So before the check runs (what the check writes is its output, not the work), the
files git ignores are looked at: one ignored by a `.gitignore` line that the same `.gitignore`
did not have before (at HEAD, or when the run started) is hidden by this work, and the attempt
fails without its check, saying which file and which rule.
Caches and environments (`__pycache__/`, `node_modules/`, `.venv/`, ...) may be ignored freely:
no check's verdict should rest on them, and committing them would be wrong.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from orchestrator.git.commit_filter import refused
from orchestrator.git.run_git import CheckpointError, run_git
from orchestrator.git.tree import split_z
from orchestrator.store.agent_words import TAKE_RULES_OUT
from shared_base.check_result import CheckResult

# Generated, never the project's work: ignoring them is what a careful agent does.
_GENERATED_DIRS = frozenset({
    "__pycache__", "node_modules", ".venv", "venv", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", ".nox",
    ".cache", "dist", "build", "target", ".coverage", "htmlcov",
})
_GENERATED_SUFFIXES = (".pyc", ".pyo", ".egg-info", ".egg-info/", ".log")
_SHOWN = 10


def hidden_by_new_rules(workspace: Path, before: Sequence[str]) -> list[tuple[str, str]]:
    """(file, "`rule` in <.gitignore>") for each file git ignores in `workspace` only because of a
    `.gitignore` line that none of the `before` trees (commits or trees: HEAD, the start of the run)
    has in that file. Empty when git cannot say (no repository: nothing is committed either)."""
    try:
        listed = run_git(workspace, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory",
                         "--", ".")
        candidates = [path for path in split_z(listed.stdout) if not _generated(path)] if listed.returncode == 0 else []
        if not candidates:
            return []
        matched = run_git(workspace, "check-ignore", "-v", "-z", "--stdin", stdin="\0".join(candidates) + "\0")
    except CheckpointError:
        return []
    fields = split_z(matched.stdout) if matched.returncode == 0 else []
    old_rules: dict[str, set[str]] = {}
    hidden: list[tuple[str, str]] = []
    for index in range(0, len(fields) - 3, 4):
        source, _line, pattern, path = fields[index:index + 4]
        if not source.endswith(".gitignore") or Path(source).is_absolute():
            continue  # `.git/info/exclude` and the user's global excludes: not the agent's
        if source not in old_rules:
            old_rules[source] = _rules(workspace, source, before)
        if pattern.strip() not in old_rules[source]:
            hidden.append((path, f"`{pattern}` in {source}"))
    return hidden


def hidden_result(command: str | None, attempt: int, hidden: list[tuple[str, str]]) -> CheckResult:
    """The attempt's result when files its work needs may be left out of its checkpoint."""
    shown = ", ".join(f"{path} ({rule})" for path, rule in hidden[:_SHOWN])
    more = f" and {len(hidden) - _SHOWN} more" if len(hidden) > _SHOWN else ""
    return CheckResult(
        command=command, success=False, exit_code=None, attempt=attempt, refused_by="the ignore-rules guard",
        error=(f"ignore rules this work added hide files from git: {shown}{more}. A checkpoint holds only what "
               "git sees, so the check would not see them on a clean checkout (it was not run)" + TAKE_RULES_OUT),
    )


def _rules(workspace: Path, source: str, before: Sequence[str]) -> set[str]:
    """The stripped lines `source` (a `.gitignore`, from the repository's top) has in any of `before`."""
    found: set[str] = set()
    for rev in before:
        shown = run_git(workspace, "show", f"{rev}:{source}")
        if shown.returncode == 0:
            found |= {line.strip() for line in shown.stdout.splitlines()}
    return found


def _generated(path: str) -> bool:
    parts = path.rstrip("/").split("/")
    return refused(path) or any(part in _GENERATED_DIRS for part in parts) or path.endswith(_GENERATED_SUFFIXES)
