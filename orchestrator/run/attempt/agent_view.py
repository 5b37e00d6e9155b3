"""What the agent is shown about its surroundings, beside the feature itself.

A retry is a new conversation: without this it would spend its first turn on `git status`. It
is told what the previous attempt left in the tree (a diff stat against the last checkpoint)
and what that attempt reported. Rendered inside `## Last Verification Result`, the section a
retry starts with (`feature_prompt`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from orchestrator.git.checkpoint import is_git_repo
from orchestrator.git.run_git import CheckpointError
from orchestrator.git.tree import diff_stat
from orchestrator.json_types import AgentReport
from orchestrator.tools.report import MAX_SUMMARY

MAX_CHANGED = 30  # files listed; the rest counted
MAX_REPORTED = 1500  # characters of the previous summary, and of its notes


@dataclass(frozen=True)
class AttemptView:
    """Notes for one attempt's first message, each left out when empty."""

    retry: str = ""
    """After the failed check: what the previous attempt left and said (`retry_note`)."""


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
