"""On resume without a sandbox, a `passed` the run cannot back up is not believed.

Without the sandbox the agent's commands can write anything the user can: a `passed` line
appended to the state journal, a whole state file. So a resumed run takes `passed` only from
a feature whose own log says it passed with a successful check of the current command and,
in a git project with checkpoints on, whose checkpoint commit `orchestrate: <id>: <name>` is
in HEAD's history (or is still to be made: the pass is recorded as not finished). Anything
else goes back to `pending`, with a warning: it is built and checked again.

This raises the bar, it does not close the door: an agent that forges the log and the commit
too is caught only by the sandbox, or by checks run again on the final tree.
"""

from __future__ import annotations

from collections.abc import Callable

from orchestrator.git.checkpoint import is_git_repo
from orchestrator.git.run_git import CheckpointError, run_git
from orchestrator.spec.feature_spec import Feature, FeatureSpec
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.feature_log import FeatureLog, find_feature_log
from orchestrator.store.run_state import FeatureState, RunState

SPEC_PASSES_REASON = "marked passes: true in the spec"


def distrust_unproven_passes(
    state: RunState, spec: FeatureSpec, paths: ProjectPaths, *, checkpoints: bool, on_warning: Callable[[str], None]
) -> list[str]:
    """Make every `passed` feature of `spec` without proof `pending` again; the ids it changed."""
    claimed = [f for f in spec.features if _claims_pass(state, f)]
    if not claimed:
        return []
    subjects = _checkpoint_subjects(paths) if checkpoints and is_git_repo(paths.root) else None
    doubted = []
    for feature in claimed:
        entry = state.features[feature.id]
        problem = _missing_proof(feature, entry, find_feature_log(paths, feature.id), spec, subjects)
        if problem is None:
            continue
        on_warning(
            f"feature {feature.id} is recorded as passed, but {problem}; the record may have been written by "
            "a command outside any sandbox, so it is built and checked again (use --sandbox bwrap to rule this out)"
        )
        entry.status, entry.reason, entry.finishing = "pending", f"passed not proven on resume: {problem}", None
        doubted.append(feature.id)
    return doubted


def _claims_pass(state: RunState, feature: Feature) -> bool:
    entry = state.features.get(feature.id)
    # `passes: true` in the spec is the user's word, not the agent's.
    return entry is not None and entry.status == "passed" and not feature.passes


def _missing_proof(
    feature: Feature, entry: FeatureState, log: FeatureLog | None, spec: FeatureSpec, subjects: set[str] | None
) -> str | None:
    """What is missing to believe the pass, or None when nothing is."""
    if log is None or log.status != "passed":
        return "its feature log does not say so"
    command = spec.check_command(feature)
    if command and not (log.verification and log.verification.success and log.verification.command == command):
        return "its feature log shows no passing run of its check"
    if subjects is None or (entry.finishing is not None and entry.finishing.checkpoint_message):
        return None  # no checkpoints here, or the checkpoint is still to be made by this run
    if f"orchestrate: {feature.id}: {feature.name}".strip() not in subjects:
        return "no checkpoint commit for it is in the git history"
    return None


def _checkpoint_subjects(paths: ProjectPaths) -> set[str] | None:
    """The messages of HEAD's history that look like checkpoints; None when git cannot say."""
    try:
        # git filters: a long history of other commits is never read into Python.
        result = run_git(paths.root, "log", "-z", "--no-color", "--format=%B", "--grep=^orchestrate: ", "HEAD", "--")
    except CheckpointError:
        return None
    if result.returncode != 0:
        return set()  # no commit yet: no checkpoint either
    return {body.strip() for body in result.stdout.split("\0") if body.strip().startswith("orchestrate: ")}
