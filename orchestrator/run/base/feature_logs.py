"""The feature logs as the run reads and writes them: one place for `.autonomous/logs/`.

`FeatureLogs` is one of the run's collaborators (`orchestrator.run.runner.RunParts`):
tests give the run one that fails to write, as a full disk would.
"""

from __future__ import annotations

from orchestrator.json_types import AgentReport
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.feature_log import FeatureLog, find_feature_log, write_feature_log
from orchestrator.store.records import AttemptRecord


class FeatureLogs:
    """Reads and writes the feature logs of one project."""

    def __init__(self, paths: ProjectPaths) -> None:
        self.paths = paths

    def read(self, feature_id: str) -> FeatureLog | None:
        """A feature's log, or None when there is none that can be used."""
        return find_feature_log(self.paths, feature_id)

    def write(self, log: FeatureLog) -> None:
        write_feature_log(self.paths, log)

    def previous(self, feature_id: str) -> tuple[list[AttemptRecord], AgentReport | None]:
        """The `attemptHistory` ([] when none) and the agent's last report a previous run logged."""
        log = self.read(feature_id)
        if log is None:
            return [], None
        return list(log.attempt_history), log.report


def with_attempt(history: list[AttemptRecord], record: AttemptRecord) -> list[AttemptRecord]:
    """`history` with `record` in it once: a check re-run after a kill replaces its attempt's record (cut-short stay)."""
    kept = [entry for entry in history if not (entry.attempt == record.attempt and entry.stop != "interrupted")]
    return [*kept, record]
