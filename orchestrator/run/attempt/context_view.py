"""The run's view of the project's context: every call the run makes to the Context Agent.

A feature job asks it for a feature's turn (built by `feature_prompt.feature_turn` under the run's
strategy) and tells it what happened (reports, failures, what a retry taught); the
coordinator asks it to summarize. Tests and benchmarks pass a subclass to watch or fake it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from context_agent.injection.context_injection import ContextInjection
from context_agent.project_memory import ContextAgent
from context_agent.records.feature_records import FeatureRecord
from context_agent.summarizer.summarization import SummaryResult
from orchestrator.run.attempt.agent_view import NO_VIEW, AttemptView
from orchestrator.run.attempt.feature_prompt import FeatureTurn, feature_turn
from orchestrator.run.attempt.strategies import strategy_named
from orchestrator.run.checks.protection.check_paths import check_file_keys
from orchestrator.spec.feature_spec import Feature, FeatureSpec
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.feature_log import read_feature_log
from orchestrator.store.run_state import FeatureState
from shared_base.check_result import CheckResult


class ContextView:
    """The Context Agent and the context strategy, as one feature job and the run see them."""

    def __init__(self, agent: ContextAgent, spec: FeatureSpec, paths: ProjectPaths, *, strategy: str, depth: int) -> None:
        self.agent = agent
        self.spec = spec
        self.paths = paths
        self.strategy = strategy_named(strategy)
        self.depth = depth
        # `--jobs N`: workers read and record at once; the Context Agent's files are read-modify-write.
        # The agent's own lock, so that its summarizer call (made outside it) holds no worker up.
        self.lock = agent.lock

    def turn(
        self, feature: Feature, *, verification: CheckResult | None, recent_ids: Sequence[str],
        interrupted_attempt: int | None, regression_note: str = "", reserved_tokens: int = 0,
        view: AttemptView = NO_VIEW, files: Collection[str] = (),
    ) -> FeatureTurn:
        """`feature`'s turn: its strategy's context and its first user message; `reserved_tokens`
        of the context budget go to a note in the prompt (the Impact Agent's forward-looking line);
        `files`: what the feature is known to touch (`known_files`)."""
        with self.lock:
            return feature_turn(
                feature, self.spec, self.strategy.name, self.paths, injections=self, verification=verification,
                recent_ids=recent_ids, depth=self.depth, interrupted_attempt=interrupted_attempt,
                regression_note=regression_note, reserved_tokens=reserved_tokens, view=view, files=files,
            )

    def get_injection(self, feature_id: str, reserved_tokens: int = 0, files: Collection[str] = ()) -> ContextInjection:
        """The Context Agent's project context for `feature_id` (the compressed strategy's)."""
        with self.lock:
            return self.agent.get_injection(feature_id, reserved_tokens, files)

    def record_report(self, feature_id: str, report: Mapping[str, Any]) -> None:
        with self.lock:
            self.agent.record_report(feature_id, report)

    def record_failure(self, feature_id: str, attempt: int, verification: CheckResult, files: Sequence[str] = ()) -> None:
        with self.lock:
            self.agent.record_failure(feature_id, attempt, verification, files)

    def record_prevention(self, feature_id: str, learned: str) -> None:
        with self.lock:
            self.agent.record_prevention(feature_id, learned)

    def summarize(self, feature_ids: Sequence[str], trigger: str) -> SummaryResult:
        """Fold the features' records; only a strategy that injects the summary asks the model.
        Not under the lock: the agent takes it itself, except during the model call."""
        return self.agent.summarize(feature_ids, trigger, use_model=self.strategy.summarizes_with_model)


def known_files(
    workspace: Path, command: str | None, entry: FeatureState | None, predicted: Iterable[str] = (),
) -> frozenset[str]:
    """What a feature is known to touch before an attempt: its check's files (as its first attempt
    records them), the footprint of an earlier pass, and the files its assessment foresees."""
    if entry is not None and entry.check_files is not None:
        check = entry.check_files.files
    else:
        check = check_file_keys(workspace, command)
    footprint = entry.footprint.files() if entry is not None and entry.footprint is not None else set()
    return frozenset({*check, *footprint, *predicted})


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
