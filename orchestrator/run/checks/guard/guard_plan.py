"""Which of the affected checks the regression guard runs now, and which it leaves to final verification.

The affected checks are ranked by how likely the change is to have broken them: most files
shared between their footprint and the change first, then those that failed before (a check
the guard saw fail in this run, or a feature that needed more than one attempt), then the
feature's dependencies, then the one re-run longest ago (so that, over a run where every
feature touches one shared file, the guard's attention goes round every check instead of
always the first few). They are taken in that order while their estimated time, spread over
the checks run at once, fits the budget; at least one always runs. Estimates are each check's
last measured time in this run, else the feature's own check time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Candidate:
    """One affected check and what ranks it."""

    feature_id: str
    command: str
    shared_files: int
    failed_before: bool
    dependency: bool
    last_run: int  # the guard's round when it last ran (0: never in this run)
    position: int  # in the spec

    def rank(self) -> tuple[int, int, int, int, int]:
        return (-self.shared_files, -int(self.failed_before), -int(self.dependency), self.last_run, self.position)


@dataclass(frozen=True)
class GuardPlan:
    """The affected checks (ranked), those run now, and those deferred to final verification."""

    affected: list[str] = field(default_factory=list)
    picked: list[str] = field(default_factory=list)
    deferred: list[str] = field(default_factory=list)


def plan_checks(
    candidates: list[Candidate], *, budget_seconds: float | None, estimate: Callable[[str], float], workers: int,
) -> GuardPlan:
    """Rank `candidates` and fit them into `budget_seconds` (None: every one runs)."""
    ranked = sorted(candidates, key=Candidate.rank)
    affected = [c.feature_id for c in ranked]
    if budget_seconds is None:
        return GuardPlan(affected, list(affected), [])
    picked: list[str] = []
    deferred: list[str] = []
    commands: dict[str, None] = {}
    spent = 0.0
    parallel = max(1, workers)
    for candidate in ranked:
        if candidate.command in commands:  # one run serves every feature sharing the command
            picked.append(candidate.feature_id)
            continue
        cost = estimate(candidate.feature_id)
        if picked and (spent + cost) / parallel > budget_seconds:
            deferred.append(candidate.feature_id)
            continue
        picked.append(candidate.feature_id)
        commands[candidate.command] = None
        spent += cost
    return GuardPlan(affected, picked, deferred)


def estimator(durations: Mapping[str, float], fallback: float) -> Callable[[str], float]:
    """Each check's last measured seconds, else `fallback`."""
    return lambda feature_id: durations.get(feature_id, fallback)
