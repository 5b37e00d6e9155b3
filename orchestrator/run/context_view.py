"""What the Context Agent is given from the run: each feature's record, from its log."""

from __future__ import annotations

from collections.abc import Callable

from context_agent import FeatureRecord
from orchestrator.store.feature_log import read_feature_log
from orchestrator.store.paths import ProjectPaths


def feature_reader(paths: ProjectPaths) -> Callable[[str], FeatureRecord | None]:
    """`read_feature` for `ContextAgent`: a feature's record from its log, None when it has
    none; raises `UnusableLog` or `OSError`, saying why, when the log cannot be used."""

    def read_feature(feature_id: str) -> FeatureRecord | None:
        try:
            log = read_feature_log(paths.feature_log(feature_id))  # bounded, and checked to be this feature's
        except FileNotFoundError:
            return None
        return FeatureRecord.from_log(feature_id, log)

    return read_feature
