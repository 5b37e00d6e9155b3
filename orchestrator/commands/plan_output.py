"""What `orchestrate plan` prints: the prompts of a dry run, and the plan's result.

The result goes to stdout (a table, or one JSON object with `--json`); progress and warnings
went to stderr as they happened.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from orchestrator.json_types import JsonObject
from orchestrator.llm.conversation import text_of
from orchestrator.llm.costs.spend import Spend
from orchestrator.plan.check_writer import FeatureCheck, suggested_path
from orchestrator.plan.plan_prompts import CHECK_SYSTEM, check_prompt
from orchestrator.plan.planner import PlannedSpec, PlannerSettings, planner_requests
from orchestrator.spec.feature_spec import FeatureSpec


def print_dry_run(
    description: str, planner: PlannerSettings, runner: str, upgraded: FeatureSpec | None,
    json_mode: bool,
) -> None:
    """The first prompt of each call the plan would start with; no call is made."""
    if upgraded is None:
        prompts = [(r["system"], text_of(r["messages"][0])) for r in
                   planner_requests(description, planner, runner)]
        after = "each feature's check prompt follows once the features are planned"
    else:
        prompts = [(CHECK_SYSTEM, check_prompt(
            f, project=upgraded.project, description=upgraded.description or description, file_map=planner.file_map,
            runner=runner, suggested_path=suggested_path(f.id), suggested_verify=upgraded.check_command(f),
        )) for f in upgraded.features]
        after = "each check is then run on the current tree"
    if json_mode:
        for system, prompt in prompts:
            sys.stdout.write(json.dumps({"type": "prompt", "system": system, "prompt": prompt}) + "\n")
        return
    for index, (system, prompt) in enumerate(prompts, 1):
        sys.stdout.write(f"===== prompt {index} of {len(prompts)}: system =====\n{system}\n")
        sys.stdout.write(f"===== prompt {index} of {len(prompts)}: user =====\n{prompt}\n\n")
    sys.stdout.write(f"(dry run: no request sent; {after})\n")


NO_RUNNER_FOUND = ("no test runner was found in the project (pytest configuration, tests/, package.json with a"
                   " test script, Cargo.toml, go.mod) or named in the description")


def print_result(
    output: Path, spec: FeatureSpec, planned: PlannedSpec, checks: Sequence[FeatureCheck], spend: Spend,
    json_mode: bool, no_checks: str | None = None,
) -> list[str]:
    """Say what was written; returns the ids of the features whose check is flagged. `no_checks`:
    why no check file was written (None when they were)."""
    flagged = [c.feature_id for c in checks if c.verdict in ("vacuous", "broken")]
    for check in checks:
        if check.feature_id in flagged:
            sys.stderr.write(
                # The reason may carry parentheses of its own: a colon, never nested brackets.
                f"orchestrate: warning: {check.feature_id}: check flagged as {check.verdict}: {check.reason};"
                " review it before running\n"
            )
    if json_mode:
        sys.stdout.write(json.dumps(_summary(output, spec, planned, checks, spend, flagged)) + "\n")
        return flagged
    red = sum(1 for c in checks if c.red)
    lines = [f"{output}: {len(spec.features)} feature(s)" + (
        f", planned in {planned.chunks} part(s) with {planned.repairs} repair(s)" if planned.chunks else ", kept from the list"
    )]
    if checks:
        lines.append(f"checks: {red} red, {len(flagged)} flagged, written first and protected")
    if no_checks:
        lines.append(f"checks: none written, because {no_checks}; each feature's verify command names tests"
                     " that do not exist yet")
    by_id = {c.feature_id: c for c in checks}
    lines.append(f"  {'feature':<24} {'check':<8} {'check files' if checks else 'verify command'}")
    for feature in spec.features:
        found = by_id.get(feature.id)
        state = "-" if found is None or found.verdict is None else found.verdict
        files = ", ".join(found.files) if found else ("" if checks else spec.check_command(feature) or "(none)")
        lines.append(f"  {feature.id:<24} {state:<8} {files}" + (f"  {found.reason}" if found and found.reason else ""))
    lines.append(f"cost ${spend.run.cost_usd:.4f} in {spend.run.calls} call(s)")
    if no_checks:
        lines.append(f"next: to get a failing check for each feature first, plan again with --write-checks --force"
                     f" (pytest unless the description names a runner) or once the project has a test runner;"
                     f" or review {output} and write the checks yourself, then: orchestrate run {output}")
    else:
        lines.append(f"next: review {output} and the checks, then: orchestrate run {output}")
    sys.stdout.write("\n".join(lines) + "\n")
    return flagged


def _summary(
    output: Path, spec: FeatureSpec, planned: PlannedSpec, checks: Sequence[FeatureCheck], spend: Spend,
    flagged: list[str],
) -> JsonObject:
    by_id = {c.feature_id: c for c in checks}
    features = []
    for feature in spec.features:
        found = by_id.get(feature.id)
        features.append({
            "id": feature.id, "name": feature.name, "verify": spec.check_command(feature), "red": feature.red,
            "checkFiles": found.files if found else [], "verdict": found.verdict if found else None,
            "reason": found.reason if found else "", "rewrites": found.rewrites if found else 0,
        })
    return {
        "spec": str(output), "features": features, "flagged": flagged, "chunks": planned.chunks,
        "repairs": planned.repairs, "dropped": planned.dropped, "calls": spend.run.calls,
        "costUsd": round(spend.run.cost_usd, 6),
    }
