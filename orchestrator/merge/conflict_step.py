"""A merge conflict under `--jobs N`, resolved by a focused step instead of a whole new attempt.

When the merge queue cannot squash-merge a feature's work onto the branch as it is now, the
feature's work branch is rebased onto that branch in its own worktree. Where git merges on
its own, nothing more is needed. Where it cannot, the model gets only the conflict: both sides
of each hunk, the feature's description and its check, in one short call on the agent's model
that must answer through one forced tool (`resolve_merge_conflict`) with the resolved text of
every hunk. The answers replace the hunks, the rebase goes on, and the queue merges and
re-checks the result as it does any work. If anything fails (a conflict git cannot mark up,
such as a deleted or binary file; a conflict too large to send; an answer that leaves a hunk
out or keeps a marker; a second stop of the rebase), the rebase is aborted and the work
branch is as it was: the caller falls back to a whole new attempt.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from orchestrator.git.run_git import run_git
from orchestrator.json_types import JsonSchema
from orchestrator.llm.client import ModelClient

CONFLICT_TOOL = "resolve_merge_conflict"
CONFLICT_MAX_TOKENS = 8192  # the answer repeats the hunks, resolved: as long as they are, at most
MAX_CONFLICT_CHARS = 24_000  # both sides of every hunk: more than this is no focused step
_OPEN, _MIDDLE, _CLOSE = "<<<<<<< ", "=======", ">>>>>>> "
# Plain two-sided markers, whatever the repository's own setting (diff3 adds a base section).
_MERGE_STYLE = ("-c", "merge.conflictStyle=merge")


@dataclass(frozen=True)
class Hunk:
    """One conflicting region: the branch's side (as merged meanwhile) and the feature's."""

    file: str
    index: int  # its place among the file's hunks
    branch: str
    feature: str


Ask = Callable[[list[Hunk]], dict[tuple[str, int], str] | None]
"""The model's step: the resolved text of each (file, index), or None when it gave no usable answer."""


def parse_hunks(file: str, text: str) -> list[Hunk] | None:
    """The hunks git marked in `text`; None when the markers are not well formed."""
    hunks: list[Hunk] = []
    side: list[str] | None = None
    branch: list[str] = []
    for line in text.splitlines(keepends=True):
        bare = line.rstrip("\r\n")
        if bare.startswith(_OPEN):
            if side is not None:
                return None
            branch, side = [], []
        elif bare == _MIDDLE and side is not None and not branch:
            branch, side = side, []
        elif bare.startswith(_CLOSE) and side is not None:
            hunks.append(Hunk(file, len(hunks), "".join(branch), "".join(side)))
            side = None
        elif side is not None:
            side.append(line)
    return hunks if side is None and hunks else None


def resolved_text(text: str, answers: list[str]) -> str:
    """`text` with its k-th marked hunk replaced by `answers[k]` (a line end added if missing)."""
    out: list[str] = []
    inside, index = False, 0
    for line in text.splitlines(keepends=True):
        bare = line.rstrip("\r\n")
        if not inside and bare.startswith(_OPEN):
            inside = True
            answer = answers[index]
            out.append(answer if not answer or answer.endswith("\n") else answer + "\n")
            index += 1
        elif inside and bare.startswith(_CLOSE):
            inside = False
        elif not inside:
            out.append(line)
    return "".join(out)


class ConflictStep:
    """Rebase one feature's work branch (in its worktree `tree`, project at `project`) onto `base`."""

    def __init__(self, tree: Path, project: Path, git_options: list[str], ask: Ask) -> None:
        self.tree, self.project, self.git_options, self.ask = tree, project, git_options, ask
        self.model_called = False

    def run(self, base: str) -> bool:
        """True when the work branch now sits on `base` with every conflict resolved."""
        rebased = self._git("rebase", "--quiet", base)
        if rebased.returncode == 0:
            return True
        resolved = False
        try:
            resolved = self._resolve() and self._git("rebase", "--continue").returncode == 0
        except (OSError, UnicodeDecodeError):
            resolved = False
        finally:  # a limit or an interrupt during the call leaves the branch as it was too
            if not resolved:
                self._git("rebase", "--abort")
        return resolved

    def _resolve(self) -> bool:
        names = self._git("diff", "--name-only", "--relative", "--diff-filter=U")
        files = [name for name in names.stdout.splitlines() if name]
        if names.returncode != 0 or not files:
            return False
        texts: dict[str, str] = {}
        hunks: list[Hunk] = []
        for name in files:
            path = self.project / name
            if path.is_symlink() or not path.is_file():
                return False  # a deleted file or a link: nothing to mark up
            texts[name] = path.read_text(encoding="utf-8")
            found = parse_hunks(name, texts[name])
            if found is None:
                return False
            hunks += found
        if sum(len(h.branch) + len(h.feature) for h in hunks) > MAX_CONFLICT_CHARS:
            return False
        self.model_called = True
        answers = self.ask(hunks)
        if answers is None or any((h.file, h.index) not in answers for h in hunks):
            return False
        if any(_OPEN in text or _CLOSE in text for text in answers.values()):
            return False
        for name, text in texts.items():
            count = sum(1 for h in hunks if h.file == name)
            (self.project / name).write_text(resolved_text(text, [answers[(name, k)] for k in range(count)]),
                                             encoding="utf-8")
        return self._git("add", "--", *files).returncode == 0

    def _git(self, *args: str) -> subprocess.CompletedProcess[str]:
        return run_git(self.project, *self.git_options, *_MERGE_STYLE, *args)


def conflict_prompt(description: str, check: str | None, hunks: list[Hunk]) -> str:
    """The one user message of the focused step: the feature, its check, and only the conflict."""
    listed = [{"file": h.file, "index": h.index, "branch": h.branch, "feature": h.feature} for h in hunks]
    return (
        "Your feature's work no longer merges onto the branch: other features changed the same lines meanwhile.\n\n"
        f"## Feature\n{description}\n\n## Its check\n`{check or '(none)'}`\n\n"
        "## The conflict\nEach hunk gives the branch's text as it is now (`branch`, keep what it adds) and your "
        "feature's text (`feature`). Give, for every hunk, the text that keeps both changes and passes the check, "
        f"with no conflict markers, by calling `{CONFLICT_TOOL}` once.\n\n```json\n"
        + json.dumps({"hunks": listed}, indent=1) + "\n```"
    )


CONFLICT_TOOL_SCHEMA: JsonSchema = {
    "type": "object",
    "properties": {"hunks": {"type": "array", "items": {
        "type": "object",
        "properties": {"file": {"type": "string"}, "index": {"type": "integer"}, "resolved": {"type": "string"}},
        "required": ["file", "index", "resolved"],
    }}},
    "required": ["hunks"],
}


def read_answer(content: list[object]) -> dict[tuple[str, int], str] | None:
    """The resolved text per (file, index) from the reply's forced tool call; None if there is none."""
    for block in content:
        if getattr(block, "type", None) == "tool_use" and getattr(block, "name", None) == CONFLICT_TOOL:
            given = getattr(block, "input", None)
            items = given.get("hunks") if isinstance(given, dict) else None
            if not isinstance(items, list):
                return None
            found: dict[tuple[str, int], str] = {}
            for item in items:
                if isinstance(item, dict) and isinstance(item.get("file"), str) and isinstance(item.get("index"), int) \
                        and isinstance(item.get("resolved"), str):
                    found[(item["file"], item["index"])] = item["resolved"]
            return found
    return None


def model_ask(client: ModelClient, model: str, description: str, check: str | None) -> Ask:
    """The focused step's call: one forced tool call on the agent's `model`, booked to the feature.
    With no client of the run's own (Claude Code on a Claude plan) there is no call: no answer,
    and a new attempt resolves the conflict instead."""
    if client.sdk is None:
        return lambda _hunks: None

    def ask(hunks: list[Hunk]) -> dict[tuple[str, int], str] | None:
        result = client.create(
            model=model, max_tokens=CONFLICT_MAX_TOKENS,
            system="You resolve merge conflicts in a software project: keep both sides' intent, add nothing else.",
            messages=[{"role": "user", "content": conflict_prompt(description, check, hunks)}],
            tools=[{"name": CONFLICT_TOOL, "description": "The resolved text of every conflicting hunk.",
                    "input_schema": CONFLICT_TOOL_SCHEMA}],
            tool_choice={"type": "tool", "name": CONFLICT_TOOL},
        )
        return read_answer(list(result.message.content))

    return ask
