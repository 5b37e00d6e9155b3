"""Files that can change a check's outcome without being the check.

A check is protected by hash (`orchestrator.run.checks.protection.protect`), but pytest and Python read more than
the files a command names: a `conftest.py` hook can turn every failure into a pass, a
`pytest.ini` with `addopts = --collect-only` runs no test at all, a `random.py` beside the
tests shadows the standard library, and `sitecustomize.py` or a `.pth` file runs code in
every interpreter. None of these is wrong in itself (a feature may well add a fixture), so
they are not forbidden; they are watched.

Before a feature's first attempt (`InfluenceWatch.before_attempt`) the files that exist are
hashed; after each attempt (`after_attempt`) they are hashed again, and what was added,
changed or removed during the feature is returned as `Influencer`s, recorded in the
verification result and announced as a warning. `--strict-checks` turns them into a failed
attempt (`strict_refusal`).

Watched, relative to the directories on the check's path (the project root, every file or
directory the command names, and their parents up to the root; the words are read as
written, so a test file the attempt creates does not move where the snapshots look):
- `conftest.py` in those directories, and anywhere under a directory the command names
  (under the root for `tox`, `nox`, `make`, and `pytest` given no path);
- pytest's configuration there: `pytest.ini`, `.pytest.ini`, `pytest.toml`, `.pytest.toml`,
  `tox.ini` (whole files), the `[tool.pytest...]` table of `pyproject.toml` and the
  `[tool:pytest]` section of `setup.cfg` (only those parts: other edits are ordinary work);
- `sitecustomize.py`, `usercustomize.py` (there and one level below the root) and `*.pth`;
- modules and packages there named like a standard-library module (`random.py`, `json/`),
  only when new: editing the project's own `calendar.py` is editing code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from orchestrator.run.checks.influence.influence_snapshot import (
    KIND_CONFTEST,
    KIND_PYTEST_CONFIG,
    KIND_SITE_HOOK,
    KIND_STDLIB_SHADOW,
    MAX_WALKED_ENTRIES,
    Snapshot,
    take_snapshot,
    watched_entry,
)
from orchestrator.store.agent_words import RESTORE_THEM
from shared_base.check_result import CheckResult, Influencer

_KIND_WORDS = {
    KIND_CONFTEST: "pytest hooks",
    KIND_PYTEST_CONFIG: "pytest configuration",
    KIND_SITE_HOOK: "runs in every Python process",
    KIND_STDLIB_SHADOW: "shadows the standard library",
}


def compare(before: Snapshot, after: Snapshot) -> list[Influencer]:
    """What changed from `before` to `after`: added, modified and removed files, by path."""
    found = []
    for path in sorted(set(before.files) | set(after.files)):
        old, new = before.files.get(path), after.files.get(path)
        if old == new:
            continue
        kind = (new or old or ("", ""))[0]  # one of them is there: they differ
        change = "added" if old is None else "removed" if new is None else "modified"
        if kind == KIND_STDLIB_SHADOW and change != "added":
            continue  # the project's own module, edited or deleted: ordinary work
        found.append(Influencer(path=path, kind=kind, change=change))
    return found


def describe(influencers: list[Influencer]) -> str:
    """`conftest.py (pytest hooks, added), ...` for messages."""
    return ", ".join(f"{item.path} ({_KIND_WORDS.get(item.kind, item.kind)}, {item.change})" for item in influencers)


def strict_refusal(command: str | None, attempt: int, influencers: list[Influencer]) -> CheckResult:
    """The failed verification of an attempt that changed check-influencing files under `--strict-checks`."""
    return CheckResult(
        command=command, success=False, exit_code=None, attempt=attempt, influencers=influencers,
        refused_by="--strict-checks (files that sway the check changed)",
        error=(
            "check not run: files that can change the check's outcome were changed during this feature "
            f"(--strict-checks): {describe(influencers)}{RESTORE_THEM}"
        ),
    )


class FeatureWarning(Protocol):
    """Says a warning about one feature, with the files it names (`EventSink.warn`)."""

    def __call__(self, message: str, *, id: str | None = None, influencers: list[Influencer] | None = None) -> None: ...


class InfluenceWatch:
    """Per feature, the snapshot taken before its first attempt in this run, compared after each attempt.

    The baseline stays the same across attempts, so a file planted by attempt 1 still counts
    in attempt 2. It lives in memory: a run resumed after a kill takes a new one.
    """

    def __init__(self, project_root: Path, *, strict: bool = False, on_warning: FeatureWarning | None = None) -> None:
        self.root = project_root
        self.strict = strict
        self.on_warning = on_warning or (lambda *_a, **_k: None)
        self._baselines: dict[str, Snapshot] = {}

    def before_attempt(self, feature_id: str, check_command: str | None) -> None:
        """Take the feature's baseline, unless this run already has one (nothing to watch without a check)."""
        if check_command and check_command.strip() and feature_id not in self._baselines:
            baseline = self._baselines[feature_id] = take_snapshot(self.root, check_command)
            if baseline.partial:
                self.on_warning(f"{feature_id}: more than {MAX_WALKED_ENTRIES} entries under the check's directories; "
                                "conftest.py files past them are not watched", id=feature_id)

    def after_attempt(self, feature_id: str, check_command: str | None) -> list[Influencer]:
        """What changed since the baseline; a warning says so when anything did."""
        baseline = self._baselines.get(feature_id)
        if baseline is None:
            return []
        now = take_snapshot(self.root, check_command)
        influencers = [item for item in compare(baseline, now) if not self._still_there(item, baseline)]
        if influencers:
            verdict = ("--strict-checks fails this attempt" if self.strict
                       else "the check runs anyway; review them, or use --strict-checks to fail such attempts")
            self.on_warning(
                f"{feature_id}: files that can change the check's outcome were changed during this feature: "
                f"{describe(influencers)}; {verdict}",
                id=feature_id, influencers=influencers,
            )
        return influencers

    def _still_there(self, item: Influencer, baseline: Snapshot) -> bool:
        """A file "removed" only because this snapshot did not look where the baseline did."""
        if item.change != "removed":
            return False
        return watched_entry(self.root.resolve(), item.path, item.kind) == baseline.files[item.path]

    def forget(self, feature_id: str) -> None:
        """Drop the feature's baseline (it finished)."""
        self._baselines.pop(feature_id, None)
