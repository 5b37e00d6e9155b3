"""An attempt's check, guarded: what stands between the agent's work and the verdict on it.

The check's files are recorded before the agent first runs and guarded while it works (an
agent that edits the check fails the attempt, and the files are put back); what may sway the
check from outside its files (conftest, site hooks, stdlib shadows) is watched; the check then
runs, and the integrity watch re-runs passed features after it. `FeatureJob` decides what an
attempt's result means for the feature; this module only produces that result.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

from orchestrator.run.attempt.agent_loop import stop_note
from orchestrator.run.attempt.recorder import FeatureRecorder
from orchestrator.run.checks.influence import check_influence
from orchestrator.run.checks.integrity import FeatureWatch
from orchestrator.run.checks.protection import protect
from orchestrator.run.checks.protection.check_paths import check_file_keys
from orchestrator.run.checks.running.check_command import Verifier
from orchestrator.spec.feature_spec import Feature
from orchestrator.store.agent_words import FIX_THE_CODE
from orchestrator.store.run_state import CheckFiles
from shared_base.check_result import CheckResult


class GuardedCheck:
    """The check of one feature's attempts, with its files guarded and its influencers watched."""

    def __init__(
        self, feature: Feature, *, workspace: Path, command: str | None, verifier: Verifier,
        recorder: FeatureRecorder, watch: FeatureWatch | None, strict: bool,
    ) -> None:
        self.feature, self.workspace, self.command = feature, workspace, command
        self.verifier, self.recorder, self.watch, self.strict = verifier, recorder, watch, strict
        self.influence = check_influence.InfluenceWatch(workspace, strict=strict, on_warning=recorder.events.warn)
        self.unrestored: protect.Guard | None = None  # an attempt's guard whose protected files stuck
        self.own: CheckResult | None = None  # the last attempt's own check, before the regression guard's say

    def record_check_files(self) -> None:
        """The check's files, found before the first attempt and kept across kills and resumes."""
        entry = self.recorder.entry
        command_sha = hashlib.sha256((self.command or "").encode("utf-8", "surrogatepass")).hexdigest()[:16]
        if entry.check_files is None or entry.check_files.command_sha != command_sha:
            # Recorded before the agent first runs: a file the agent creates never becomes part of the check.
            entry.check_files = CheckFiles(command_sha=command_sha, files=check_file_keys(self.workspace, self.command))

    def before_agent(self) -> protect.Guard:
        """Guard the check's files and note what may influence it, before the agent runs."""
        entry = self.recorder.entry
        check_files = entry.check_files.files if entry.check_files else []
        guard = protect.take_guard(
            self.workspace, self.command, self.feature.protected, carried=self.unrestored,
            check_files=[self.workspace / key for key in check_files],
        )
        self.unrestored = None
        self.influence.before_attempt(self.feature.id, self.command)
        return guard

    def tampered(self, attempt: int, guard: protect.Guard) -> CheckResult | None:
        """The failed verification when the agent changed the check (put back), else None."""
        changed = protect.guard_changes(guard)
        if not changed:
            return None
        stuck = protect.restore(guard, changed)
        if stuck:  # the next attempt compares against the originals, not the agent's version
            self.unrestored = guard
        how = f"could not restore {', '.join(stuck)}" if stuck else "restored"
        verification = CheckResult(
            command=self.command, success=False, exit_code=None, attempt=attempt, refused_by=protect.REFUSED_BY,
            error=f"protected files changed by the agent ({how}{FIX_THE_CODE}: {protect.named(changed)}",
        )
        self.recorder.verified(verification)
        return verification

    def run(self, attempt: int, *, reported: bool, stop: str) -> CheckResult:
        """Run the feature's check; with none, the agent's report decides."""
        self.own = None
        influencers = self.influence.after_attempt(self.feature.id, self.command)
        if influencers and self.strict:
            return check_influence.strict_refusal(self.command, attempt, influencers)
        self.recorder.phase("check")
        hidden = self.watch.hidden(self.command, attempt) if self.watch else None  # files a checkpoint would lack
        started = time.monotonic()
        result, own_seconds = hidden or self.verifier.check(self.command, attempt), time.monotonic() - started
        result.influencers, note = influencers, stop_note(stop)
        if note and not result.success:  # the retry prompt says how the agent's answer ended
            result.error = f"{result.error}; {note}" if result.error else note
        if result.skipped:
            # No check at all: the agent's report decides, and the log says it was not verified.
            result.success = reported
            result.error = None if reported else f"no check command and the agent did not report ({stop})"
        self.own = result
        self.recorder.verified(result)  # as it happened: the own check, then the guard's re-runs of passed features
        guarded = self.watch.after_check(attempt, result, own_seconds) if self.watch else result
        if guarded is not result:  # it broke one: that failure is the attempt's verification
            self.recorder.verified(guarded)
        return guarded
