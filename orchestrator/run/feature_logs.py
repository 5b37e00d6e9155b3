"""The feature logs as the run reads and writes them: one place for `.autonomous/logs/`.

`FeatureLogs` is one of the run's collaborators (`orchestrator.run.coordinator.RunParts`):
tests give the run one that fails to write, as a full disk would.
"""

from __future__ import annotations

from typing import Any

from orchestrator.store.feature_log import UnusableLog, read_feature_log, write_feature_log
from orchestrator.store.paths import ProjectPaths

AttemptRecord = dict[str, Any]  # one `attemptHistory` entry, as the feature log holds it
Report = dict[str, Any]  # the agent's `report_feature` input, as the feature log holds it


def read_log_file(paths: ProjectPaths, feature_id: str) -> dict[str, Any] | None:
    """A feature's log, or None when there is none that can be used."""
    try:
        return read_feature_log(paths.feature_log(feature_id))
    except (OSError, UnusableLog):
        return None


class FeatureLogs:
    """Reads and writes the feature logs of one project."""

    def __init__(self, paths: ProjectPaths) -> None:
        self.paths = paths

    def read(self, feature_id: str) -> dict[str, Any] | None:
        return read_log_file(self.paths, feature_id)

    def write(self, log: dict[str, Any]) -> None:
        write_feature_log(self.paths, log)

    def previous(self, feature_id: str) -> tuple[list[AttemptRecord], Report | None]:
        """The `attemptHistory` ([] when none) and the agent's last report a previous run logged."""
        log = self.read(feature_id) or {}
        history, report = log.get("attemptHistory"), log.get("report")
        return (list(history) if isinstance(history, list) else []), (report if isinstance(report, dict) else None)
