"""The combine step: shards' artifacts into one branch, one state, one memory, verified.

1. Each artifact's branch is fetched from its bundle; its checkpoint commits are found by subject.
2. Features go in dependency order. A feature some shard passed has its checkpoint landed on the
   combined branch through the parallel workers' merge queue (`landing.CombineLanding`): its own
   check and the regression guard's affected checks re-run on the combined tree. A conflict or a
   failed check leaves the branch as it was and the feature `failed`, its dependents `blocked`.
   A checkpoint already on the branch (a re-run) is not landed again.
3. The states are unioned (`state_union`), the logs copied, the Context Agent stores merged.
4. Final verification re-runs every passed feature's check on the combined tree (`final_check`),
   unless `final_verify` is off (`--no-final-verify`), as in a run.
Every check runs in the run's sandbox (`CheckSettings.sandbox`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from context_agent.memory.store_union import merge_store_files
from orchestrator.combine.artifact import Artifact
from orchestrator.combine.final_check import CheckSettings, verify_combined
from orchestrator.combine.integration import CombinedBranch
from orchestrator.combine.shard_landing import ApplyResult, CombineLanding
from orchestrator.combine.state_union import (
    add_spend,
    copy_log,
    load_imports,
    refuse_shrunk_spend,
    save_imports,
    take_entry,
)
from orchestrator.combine.untrusted import UnsafeArtifact
from orchestrator.run.base.feature_logs import FeatureLogs
from orchestrator.run.base.feature_order import ordered, reconcile
from orchestrator.run.checks.guard.regression import RegressionMode
from orchestrator.spec.feature_spec import Feature
from orchestrator.spec.load import LoadedSpec
from orchestrator.store.check_excerpt import check_verdict
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.events import EventSink
from orchestrator.store.run_state import RunState
from orchestrator.store.state import StateStore
from shared_base.check_result import CheckResult
from shared_base.files import ContextFiles


@dataclass
class CombineOutcome:
    state: RunState
    merges: list[ApplyResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    final_failures: dict[str, CheckResult] = field(default_factory=dict)

    @property
    def problems(self) -> list[str]:
        """What went wrong while combining (not features no shard passed)."""
        merged = [m.message for m in self.merges if m.result != "merged"]
        final = [f"{fid}: its check fails on the combined tree (final verification)" for fid in self.final_failures]
        return merged + final


@dataclass
class Combiner:
    """Combines `artifacts` into the project at `paths`, onto `branch`."""

    paths: ProjectPaths
    loaded: LoadedSpec
    branch: CombinedBranch
    events: EventSink
    checks: CheckSettings
    regression: RegressionMode
    on_line: Callable[[str], None]
    final_verify: bool = True  # the run's setting: False skips step 4
    store: StateStore = field(init=False)

    def __post_init__(self) -> None:
        self.store = StateStore(self.paths, on_warning=lambda m: self.on_line(f"warning: {m}"))

    def run(self, artifacts: Sequence[Artifact]) -> CombineOutcome:
        state = self.store.load() or RunState()
        state.spec_path, state.spec_hash = str(self.loaded.path.resolve()), self.loaded.sha256
        reconcile(state, self.loaded.spec, [], lambda m: self.on_line(f"warning: {m}"))
        outcome = CombineOutcome(state)
        imports = load_imports(self.paths)
        for artifact in artifacts:
            refuse_shrunk_spend(artifact, imports)
        commits = [self._checkpoints(a, i) for i, a in enumerate(artifacts)]
        branch = self.branch
        on_branch = branch.combined()
        # Its integration worktree (outside the project) goes on every way out, Ctrl-C included.
        with CombineLanding(self.paths, self.loaded.spec, state, branch, self.events, self.checks,
                            self.regression) as landing:
            for feature in dependency_order(self.loaded, self.loaded.spec.ids()):
                self._combine_feature(feature, artifacts, commits, on_branch, outcome, landing)
            self._union_books(state, artifacts)
            if self.final_verify:
                outcome.final_failures = verify_combined(landing.tree_at_tip(), self.loaded.spec, state, self.checks,
                                                         self.events, FeatureLogs(self.paths), live=self.paths.root,
                                                         run_times=self.paths.run_times)
            else:  # as a run with --no-final-verify: no checks, no `final_verification` event
                self.on_line("final verification skipped (final_verify is off: --no-final-verify, "
                             "orchestrate.toml or ORCHESTRATE_FINAL_VERIFY)")
        for fid, result in outcome.final_failures.items():
            # Its output's first meaningful lines are under the `final_verification` event's line.
            self.on_line(f"final verification: {fid}: check {check_verdict(result)}")
        self.store.save(state)
        return outcome

    def _checkpoints(self, artifact: Artifact, slot: int) -> dict[str, str]:
        """The artifact's checkpoint commits by feature id, fetched from its bundle; refused
        (`UnsafeArtifact`, before anything is combined) when one touches the run records."""
        if artifact.bundle is None:
            return {}
        if not self.branch.is_branch_name(artifact.manifest.branch or ""):
            raise UnsafeArtifact(f"{artifact.directory}: its manifest names the branch {artifact.manifest.branch!r}, "
                                 "which is not a git branch name; re-export it with `orchestrate export`")
        found = self.branch.checkpoints(self.branch.fetch(artifact.bundle, artifact.manifest.branch or "", slot))
        for fid, sha in found.items():
            records = self.branch.run_records_in(sha)
            if records:
                self.branch.drop_imports()
                raise UnsafeArtifact(
                    f"{artifact.directory}: {fid}'s checkpoint {sha[:12]} changes {records[0]}"
                    f"{f' (and {len(records) - 1} more)' if len(records) > 1 else ''}: a checkpoint never holds "
                    "the run's records (.autonomous/) or a gitlink, so the shard's branch was altered; nothing was combined"
                )
        return found

    def _combine_feature(self, feature: Feature, artifacts: Sequence[Artifact], commits: list[dict[str, str]],
                         on_branch: set[str], outcome: CombineOutcome, landing: CombineLanding) -> None:
        state, fid = outcome.state, feature.id
        passed_in = [i for i, a in enumerate(artifacts) if _status(a, fid) == "passed"]
        if len(passed_in) > 1:
            names = ", ".join(artifacts[i].name for i in passed_in)
            outcome.notes.append(f"{fid} passed in several artifacts ({names}); the first one's work is combined")
        if not passed_in:
            self._take_unpassed(fid, artifacts, state)
            return
        index = passed_in[0]
        artifact = artifacts[index]
        missing = [dep for dep in feature.depends_on if state.feature(dep).status != "passed"]
        if missing:
            reason = f"dependency {missing[0]} was not combined"
            take_entry(state, fid, artifact, "blocked", reason)
            return
        if fid in on_branch:  # combined before: applied once only
            if state.feature(fid).status != "passed":
                take_entry(state, fid, artifact, "passed")
                copy_log(self.paths, artifact, fid, "passed")
            return
        entry = artifact.state.features[fid]
        result = landing.land(feature, commits[index].get(fid), max(entry.attempts, 1))
        outcome.merges.append(result)
        if result.result == "merged":
            take_entry(state, fid, artifact, "passed")
            copy_log(self.paths, artifact, fid, "passed")
        else:
            reason = f"combine: {result.result}: {result.message}; rebuild it on the combined code with --reset {fid}"
            taken = take_entry(state, fid, artifact, "failed", reason)
            if result.failure is not None:
                taken.last_verification = result.failure
            copy_log(self.paths, artifact, fid, "failed", reason)

    def _take_unpassed(self, fid: str, artifacts: Sequence[Artifact], state: RunState) -> None:
        """No shard passed it: the record of the shard that tried it, unless it passed here."""
        if state.feature(fid).status == "passed":
            return
        for artifact in artifacts:
            entry = artifact.state.features.get(fid)
            if entry is not None and (entry.attempts or entry.status in ("failed", "blocked")):
                take_entry(state, fid, artifact, entry.status if entry.status != "in_progress" else "pending")
                copy_log(self.paths, artifact, fid, entry.status)
                return

    def _union_books(self, state: RunState, artifacts: Sequence[Artifact]) -> None:
        imports = load_imports(self.paths)
        for artifact in artifacts:
            add_spend(state, artifact, imports)
            schedule = artifact.state.summarization
            mine = state.summarization
            mine.unsummarized += [x for x in schedule.unsummarized if x not in mine.unsummarized]
            mine.summaries = max(mine.summaries, schedule.summaries)
            merge_store_files(self.paths.context, _context_files(artifact), on_event=None)
        state.summarization.completed_since_summary = len(state.summarization.unsummarized)
        self.store.save(state)
        save_imports(self.paths, imports)


def _context_files(artifact: Artifact) -> ContextFiles:
    return ContextFiles(artifact.context_dir, artifact.directory / "backups", artifact.directory)


def _status(artifact: Artifact, feature_id: str) -> str | None:
    entry = artifact.state.features.get(feature_id)
    return entry.status if entry else None


def dependency_order(loaded: LoadedSpec, ids: Sequence[str]) -> list[Feature]:
    """`ids` in run order (spec order, then priority), each after the features it depends on."""
    pending = ordered(loaded.spec, ids)
    done: set[str] = set()
    result: list[Feature] = []
    while pending:
        ready = next((f for f in pending if all(d in done or d not in ids for d in f.depends_on)), pending[0])
        pending.remove(ready)
        done.add(ready.id)
        result.append(ready)
    return result
