"""Every on-disk path the program uses, in one place.

Layout of `<project>/.autonomous/` (see `.autonomous.example/README.md`):

    state/execution-state.json      run state snapshot (atomic writes)
    state/journal.jsonl             state updates since the snapshot (appended, fsynced)
    state/run.lock                  one run at a time: the owner's pid
    logs/<feature-id>.json          one log per feature
    context/*.json                  the Context Agent's four stores
    context/pending-reports.jsonl   agents' reports since the last summarization (appended)
    memory/working-memory.jsonl     working-memory log (every strategy)
    events.jsonl                    event log: what happened, one JSON object a line
    backups/                        corrupted files set aside, never deleted
    state/run-times.json            when runs began and ended (which ignored files a run made)

`--fresh` moves the whole directory aside to `<project>/.autonomous.bak-<time>/`, which git is
told to ignore like `.autonomous/` itself.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from shared_base.files import ContextFiles

STATE_DIR_NAME = ".autonomous"
# The project's settings file: the run's configuration and prices, never the agent's to change.
RUN_CONFIG_NAME = "orchestrate.toml"
# `--fresh` backups: `.autonomous.bak-<time>[-n]`, beside the state directory.
FRESH_BACKUP_PREFIX = f"{STATE_DIR_NAME}.bak-"


def is_project_key(key: str) -> bool:
    """Whether `key` is a path relative to the project that stays inside it."""
    parts = Path(key).parts
    return bool(parts) and "\x00" not in key and not os.path.isabs(key) and ".." not in parts


@dataclass(frozen=True)
class ProjectPaths:
    """Paths below one project directory."""

    root: Path

    @classmethod
    def for_project(cls, root: str | Path) -> ProjectPaths:
        return cls(Path(root).resolve())

    @property
    def autonomous(self) -> Path:
        return self.root / STATE_DIR_NAME

    def fresh_backup(self, stamp: str) -> Path:
        """Where `--fresh` moves the state directory: `.autonomous.bak-<stamp>`."""
        return self.root / f"{FRESH_BACKUP_PREFIX}{stamp}"

    def fresh_backups(self) -> list[Path]:
        """Every `--fresh` backup in the project."""
        return sorted(self.root.glob(f"{FRESH_BACKUP_PREFIX}*"))

    @property
    def state_dir(self) -> Path:
        return self.autonomous / "state"

    @property
    def state_file(self) -> Path:
        return self.state_dir / "execution-state.json"

    @property
    def state_journal(self) -> Path:
        return self.state_dir / "journal.jsonl"

    @property
    def lock_file(self) -> Path:
        return self.state_dir / "run.lock"

    @property
    def logs_dir(self) -> Path:
        return self.autonomous / "logs"

    def feature_log(self, feature_id: str) -> Path:
        return self.logs_dir / f"{feature_id}.json"

    @property
    def context(self) -> ContextFiles:
        """The Context Agent's files, named by the Context Agent."""
        return ContextFiles.in_state_dir(self.autonomous)

    @property
    def memory_dir(self) -> Path:
        return self.autonomous / "memory"

    @property
    def working_memory(self) -> Path:
        return self.memory_dir / "working-memory.jsonl"

    @property
    def events_log(self) -> Path:
        return self.autonomous / "events.jsonl"

    @property
    def run_times(self) -> Path:
        """When runs began and ended: the ignored files verification leaves out (`carried_files`)."""
        return self.state_dir / "run-times.json"

    @property
    def backups_dir(self) -> Path:
        return self.autonomous / "backups"

    @property
    def state_dirs(self) -> tuple[Path, ...]:
        """The directories of `.autonomous/` that the program writes into."""
        return (self.state_dir, self.logs_dir, self.context.directory, self.memory_dir, self.backups_dir)
