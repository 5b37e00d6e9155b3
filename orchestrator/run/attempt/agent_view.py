"""What the agent is shown about its surroundings, beside the feature itself.

Every attempt gets `## Workspace`: a bounded map of the project's files and the facts of its
environment (network or not, which `python3`, whether `pytest` is on the PATH), so that its
first turn is not `ls` and `cat`. A retry is a new conversation: without more it would spend
its first turn on `git status`. It is told what the previous attempt left in the tree (a diff
stat against the last checkpoint) and what that attempt reported, inside `## Last Verification
Result`, the section a retry starts with (`feature_prompt`).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from orchestrator.git.checkpoint import is_git_repo
from orchestrator.git.run_git import CheckpointError
from orchestrator.git.tree import diff_stat
from orchestrator.json_types import AgentReport
from orchestrator.safety.environment import CommandEnvironment
from orchestrator.tools.report import MAX_SUMMARY

MAX_CHANGED = 30  # files listed; the rest counted
MAX_REPORTED = 1500  # characters of the previous summary, and of its notes
MAX_MAPPED = 40  # files in the prompt's map; the rest counted
WORKSPACE_HEADING = "## Workspace"


@dataclass(frozen=True)
class AttemptView:
    """Notes for one attempt's first message, each left out when empty."""

    retry: str = ""
    """After the failed check: what the previous attempt left and said (`retry_note`)."""
    workspace: str = ""
    """`## Workspace`: the file map and the environment's facts (`workspace_section`)."""


NO_VIEW = AttemptView()


def retry_note(workspace: Path, report: AgentReport | None) -> str:
    """The tree as the previous attempt left it, and its report."""
    parts = [_tree_note(workspace)]
    if report and str(report.get("summary") or "").strip():
        parts.append("The last report's summary: " + _clip(str(report["summary"])))
        if str(report.get("notes") or "").strip():
            parts.append("Its notes: " + _clip(str(report["notes"])))
    else:
        parts.append("No attempt has reported yet.")
    return "\n".join(part for part in parts if part)


def unreported(final_text: str) -> AgentReport | None:
    """The report of an attempt that never called `report_feature` even when reminded: its final
    text as the summary, so that the retry and the summarizer still hear what it said."""
    text = final_text.strip()
    if not text:
        return None
    return {"summary": text[:MAX_SUMMARY], "decisions": [], "constraints": [],
            "notes": "taken from the agent's final text: it did not call report_feature"}


def _tree_note(workspace: Path) -> str:
    if not is_git_repo(workspace):
        return "The previous attempt's files are still in the project; nothing was undone."
    try:
        lines, total = diff_stat(workspace, MAX_CHANGED)
    except CheckpointError:
        return "The previous attempt's files are still in the project; nothing was undone."
    if not total:
        return "The previous attempt left the tree as the last checkpoint had it (no changes)."
    more = [f"- ... and {total - len(lines)} more"] if total > len(lines) else []
    return "\n".join([
        "The previous attempt's work is still in the tree, changed since the last checkpoint:",
        *[f"- {line}" for line in lines], *more,
    ])


def _clip(text: str) -> str:
    text = text.strip()
    return text if len(text) <= MAX_REPORTED else text[:MAX_REPORTED].rstrip() + " [...]"


def workspace_section(environment: CommandEnvironment) -> str:
    """`## Workspace`: the project's files (bounded) and what its commands run with."""
    files = workspace_map(environment.workspace, MAX_MAPPED)
    listed = f"Files (caches, VCS data and .autonomous/ left out):\n{files}" if files else "Files: none yet."
    return f"{WORKSPACE_HEADING}\n\n{listed}\n\nEnvironment: {environment_facts(environment)}."


def environment_facts(environment: CommandEnvironment) -> str:
    """Network or not, which python3, whether pytest is on the PATH: what a first command would ask."""
    sandbox = environment.sandbox
    if not sandbox.active:
        network = "network as this machine has it (no sandbox)"
    elif sandbox.network:
        network = "network: all of it"
    elif sandbox.allow_hosts:
        network = f"network: only {', '.join(sandbox.allow_hosts)}"
    else:
        network = "no network (install nothing; use what is there)"
    path = environment.variables.get("PATH", os.defpath)
    python = shutil.which("python3", path=path)
    python_fact = f"python3 is {os.path.realpath(python)}" if python else "no python3 on the PATH"
    pytest = shutil.which("pytest", path=path)
    return "; ".join([network, python_fact, "pytest is on the PATH" if pytest else "no pytest command on the PATH"])


def workspace_map(root: Path, limit: int) -> str:
    """Up to `limit` files (`path (N bytes)`), sorted, top levels first, and "... and more files" when
    there are more. Made for every attempt, it stops reading at the limit: its cost does not grow
    with the project (a sorted walk of 10,000 files took tens of milliseconds). Links are not followed."""
    found: list[str] = []
    pending, more = [root], False
    while pending and not more:
        directory = pending.pop(0)
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    if entry.name.startswith(".") or entry.name in SKIP_DIRS:
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        pending.append(Path(entry.path))
                        continue
                    if len(found) >= limit:
                        more = True
                        break
                    size = entry.stat(follow_symlinks=False).st_size
                    found.append(f"{Path(entry.path).relative_to(root).as_posix()} ({size} bytes)")
        except OSError:
            continue
    return "\n".join(sorted(found) + (["... and more files (list them with `find`)"] if more or pending else []))


SKIP_DIRS = frozenset({
    ".git", ".hg", ".svn", ".autonomous", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache",
    "node_modules", ".venv", "venv", ".tox", "dist", "build", ".idea", ".vscode",
})
MAX_ENTRIES = 200


def project_file_map(root: Path, limit: int = MAX_ENTRIES, leave_out: tuple[Path, ...] = ()) -> str:
    """One line per file (`path (N bytes)`), sorted, at most `limit`; "" for an empty project
    (for `plan`, once: it counts every file; `workspace_map` is the bounded one for each attempt).

    `leave_out`: files that are not the project (the description, the spec being written).
    """
    if not root.is_dir():
        return ""
    skipped = {path.resolve() for path in leave_out}
    found: list[str] = []
    total = 0
    for current, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith(".autonomous"))
        here = Path(current)
        for name in sorted(files):
            path = here / name
            if skipped and path.resolve() in skipped:
                continue
            total += 1
            if len(found) >= limit:
                continue
            try:
                size = path.lstat().st_size
            except OSError:
                continue
            found.append(f"{path.relative_to(root).as_posix()} ({size} bytes)")
    if total > len(found):
        found.append(f"... and {total - len(found)} more files")
    return "\n".join(found)
