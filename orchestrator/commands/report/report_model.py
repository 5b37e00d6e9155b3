"""The HTML report's data model: features, attempts on the timeline, series."""

from __future__ import annotations

from dataclasses import dataclass, field

from orchestrator.json_types import JsonObject
from orchestrator.store.run_state import FeatureState


@dataclass
class FeatureRow:
    """One feature as the report shows it: its state (the `FeatureState` of its status, attempts,
    time, tokens and cost, not copies of them), and what the report works out beside it."""

    id: str
    name: str = ""
    state: FeatureState = field(default_factory=FeatureState)
    failure: list[str] = field(default_factory=list)
    footprint: list[str] = field(default_factory=list)
    context_tokens: int | None = None


@dataclass
class Span:
    """One attempt on the timeline, in ms since the first event."""

    feature: str
    attempt: int
    start: int
    end: int
    outcome: str = "running"  # passed | failed | interrupted (its run ended first) | running
    lane: int = 0
    checks: list[tuple[int, bool]] = field(default_factory=list)
    regression_checks: list[tuple[int, bool]] = field(default_factory=list)


@dataclass
class MergeRow:
    """A `merge` event: a feature's work through the merge queue (`--jobs N`, `orchestrate combine`)."""

    feature: str
    result: str  # merged | conflict | recheck_failed
    attempt: int = 0
    sha: str = ""
    message: str = ""


@dataclass
class ReportData:
    """Everything the page draws."""

    project: str
    run_id: str = ""
    model: str = ""
    features: list[FeatureRow] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)
    prompt_sizes: list[tuple[int, int]] = field(default_factory=list)  # (ms, prompt tokens)
    summarizations: list[int] = field(default_factory=list)  # ms
    totals: JsonObject = field(default_factory=dict)
    duration_ms: int = 0  # the timeline's: first event to last, gaps between runs included
    run_durations_ms: list[int] = field(default_factory=list)  # each run's own, as its closing line says it
    lanes: int = 1
    merges: list[MergeRow] = field(default_factory=list)
    final_verification: JsonObject | None = None  # the last `final_verification` event
