"""The regression guard: after a feature's own check passes and before its checkpoint, the
checks of the passed features it may have broken run again; one failing fails the attempt.

`--regression affected` (the default) picks the passed features whose footprint meets the
files this attempt changed, plus the feature's transitive dependencies; `all` picks every
passed feature; `none` turns the guard off. The guard takes the workspace and the state it
judges by, so a parallel worker can run it in its own worktree after a merge.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Literal

from orchestrator.run.check_pool import CheckRun, CheckRunner, Progress, run_checks
from orchestrator.run.verify import VerificationResult
from orchestrator.spec.load import Feature, FeatureSpec
from orchestrator.store.state import RunState

RegressionMode = Literal["affected", "all", "none"]


def dependencies_of(spec: FeatureSpec, feature: Feature) -> set[str]:
    """`feature`'s dependencies, their dependencies, and so on."""
    known = set(spec.ids())
    found: set[str] = set()
    todo = list(feature.depends_on)
    while todo:
        dep = todo.pop()
        if dep in found or dep not in known:
            continue
        found.add(dep)
        todo += spec.feature(dep).depends_on
    return found


class RegressionGuard:
    """Picks and re-runs the checks a feature's change may have broken."""

    def __init__(
        self, spec: FeatureSpec, state: RunState, *, mode: RegressionMode, concurrency: int, runner: CheckRunner,
        on_warning: Callable[[str], None] = lambda _m: None,
    ) -> None:
        self.spec, self.state, self.mode = spec, state, mode
        self.concurrency, self.runner, self.on_warning = concurrency, runner, on_warning

    def targets(self, feature: Feature, changed: Iterable[str] | None) -> list[str]:
        """The passed features (with a check) whose checks re-run after `feature`, in spec order.

        `changed` None means not known yet (before the attempt): only the footprints that the
        assessment predicts are left out, dependencies are always in."""
        if self.mode == "none":
            return []
        touched = set(changed or ())
        deps = dependencies_of(self.spec, feature)
        picked = []
        for other in self.spec.features:
            entry = self.state.features.get(other.id)
            if other.id == feature.id or entry is None or entry.status != "passed":
                continue
            if not self.spec.check_command(other):
                continue
            footprint = entry.footprint.files() if entry.footprint else set()
            if self.mode == "all" or other.id in deps or footprint & touched:
                picked.append(other.id)
        return picked

    def check(
        self, workspace: Path, feature: Feature, changed: Iterable[str], *, put_back: bool = True,
        on_progress: Progress | None = None,
    ) -> list[CheckRun]:
        """Re-run the targets' checks in `workspace`; every run, failed or not, in spec order.
        `put_back=False`: a scratch tree (`run_checks`); `on_progress`: checks done of all, as they end."""
        checks = [(fid, self.spec.check_command(self.spec.feature(fid)) or "") for fid in self.targets(feature, changed)]
        return run_checks(checks, workspace, self.runner, self.concurrency, self.on_warning, put_back=put_back,
                          on_progress=on_progress)


def failures(runs: Iterable[CheckRun]) -> list[CheckRun]:
    return [run for run in runs if not run.success]


def broken_result(broken: list[CheckRun], attempt: int) -> VerificationResult:
    """The attempt's result when it broke passed features: the first one's check, command and output."""
    first = broken[0].result
    why = first.error or (f"exit code {first.exit_code}" if first.exit_code is not None else "it failed")
    others = [run.feature_id for run in broken[1:]]
    also = f" (also broke: {', '.join(others)})" if others else ""
    return VerificationResult(
        command=first.command, success=False, exit_code=first.exit_code, output=first.output, attempt=attempt,
        error=f"your change broke feature {broken[0].feature_id}: its check failed ({why}){also}; "
              "fix your change so that check passes again, without editing that check",
    )
