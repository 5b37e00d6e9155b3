"""`orchestrate validate SPEC --run-checks`: is each pending feature's check red on the current tree?

A check that already passes before its feature is built cannot tell whether the feature was
built: the run would mark the feature passed without the agent doing anything. This runs each
pending feature's check (not passed in the saved state, not marked `passes: true`) in the
project directory, with the environment `run` gives checks, and warns for every one that
passes (vacuous) or fails for the wrong reason (broken), as `orchestrate plan` does for the
checks it writes (`orchestrator.plan.red`).
"""

from __future__ import annotations

import sys

from orchestrator.config import RunConfig
from orchestrator.plan.red import red_check
from orchestrator.run.checks.protection.outside_reads import spec_checks
from orchestrator.run.config_sandbox import command_environment
from orchestrator.spec.load import LoadedSpec
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.state import StateStore
from orchestrator.user_errors import EXIT_OK


def _warn(message: str) -> None:
    sys.stderr.write(f"orchestrate: warning: {message}\n")


def run_pending_checks(loaded: LoadedSpec, paths: ProjectPaths, config: RunConfig) -> int:
    """Run every pending feature's check once; one line each on stdout, a warning for each not red."""
    state = StateStore(paths, on_warning=_warn).load() if paths.root.is_dir() else None
    done = {fid for fid, entry in (state.features.items() if state else []) if entry.status == "passed"}
    environment = command_environment(config, paths.root, loaded.path, _warn, checks=spec_checks(loaded.spec))  # SandboxUnavailable: exit 2
    spec = loaded.spec
    counts = {"red": 0, "vacuous": 0, "broken": 0, "unchecked": 0}
    for feature in spec.features:
        if feature.passes or feature.id in done:
            continue
        command = spec.check_command(feature)
        if command is None:
            counts["unchecked"] += 1
            _warn(f"{feature.id}: no check command; the agent's own report would decide it")
            continue
        check = red_check(command, environment, timeout=config.check_timeout)
        counts[check.verdict] += 1
        sys.stdout.write(f"  {feature.id:<24} {check.verdict:<8} {check.reason}\n")
        if check.verdict == "vacuous":
            _warn(f"{feature.id}: its check already passes before the feature is built ({command}); "
                  "it cannot tell whether the feature was built: make it test what the feature adds")
        elif check.verdict == "broken":
            _warn(f"{feature.id}: its check fails for the wrong reason: {check.reason} ({command})")
    sys.stdout.write(
        f"checks run: {counts['red']} red, {counts['vacuous']} already passing, {counts['broken']} broken, "
        f"{counts['unchecked']} without a check\n"
    )
    return EXIT_OK
