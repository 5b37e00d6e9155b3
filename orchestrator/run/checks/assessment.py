"""The Checkpoint Agent's assessment before a feature: deterministic, from what is already known.

Its predicted footprint is what the feature's dependencies touched plus the file names its
description and acceptance criteria mention; the passed features it may affect are those the
regression guard would re-run for such a change; the history is the failures of related
features (its dependencies and those it may affect). It goes into the feature log, into
`orchestrate context FEATURE`, and, as one line, into the prompt.
"""

from __future__ import annotations

import re

from orchestrator.run.checks.guard.regression import RegressionGuard, dependencies_of
from orchestrator.spec.feature_spec import Feature, FeatureSpec
from orchestrator.store.records import Assessment
from orchestrator.store.run_state import RunState

# A word with a dot and a known-looking extension, or with a slash: `src/app.py`, `README.md`.
_FILE_NAME = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z][A-Za-z0-9]{0,7}|(?:[\w.-]+/)+[\w.-]+)(?![\w/-])")
MAX_NAMED = 5  # features named in the prompt line; more are counted


def named_files(text: str) -> set[str]:
    """The file names a feature's text mentions (no URLs, no version numbers)."""
    found = set()
    for match in _FILE_NAME.finditer(text):
        name = match.group(1).strip(".")
        if "://" in text[max(match.start() - 3, 0):match.start() + 3] or re.fullmatch(r"[\d.]+", name):
            continue
        found.add(name)
    return found


def assess(feature: Feature, spec: FeatureSpec, state: RunState, guard: RegressionGuard) -> Assessment:
    """The assessment of `feature` as the state stands now."""
    predicted = named_files(" ".join([feature.description, *feature.acceptance]))
    for dep in dependencies_of(spec, feature):
        entry = state.features.get(dep)
        if entry is not None and entry.footprint is not None:
            predicted |= entry.footprint.files()
    affected = guard.targets(feature, predicted)
    history = []
    for related in sorted(dependencies_of(spec, feature) | set(affected)):
        entry = state.features.get(related)
        if entry is None or (entry.attempts <= 1 and entry.status not in ("failed", "regressed")):
            continue
        check = entry.last_verification
        why = f": {check.error}" if check and check.error else ""
        history.append(f"{related}: {entry.status} after {entry.attempts} attempt(s){why}"[:300])
    return Assessment(predicted_footprint=sorted(predicted), affected=affected, history=history)


def prompt_line(assessment: Assessment, spec: FeatureSpec) -> str:
    """One short line naming the passed features whose checks will be re-run, or "" when none."""
    if not assessment.affected:
        return ""
    named = assessment.affected[:MAX_NAMED]
    commands = [spec.check_command(spec.feature(fid)) or "" for fid in named]
    prefix = shared_prefix(commands)
    shown = [f"{fid} (`{command[len(prefix):]}`)" for fid, command in zip(named, commands, strict=True)]
    more = f" and {len(assessment.affected) - MAX_NAMED} more" if len(assessment.affected) > MAX_NAMED else ""
    each = f" (each command starts `{prefix.rstrip()}`)" if prefix else ""
    return (f"Regression checks: after your check passes, the checks of {', '.join(shown)}{more}{each} will be "
            "re-run; run them yourself before reporting.")


def shared_prefix(commands: list[str], shortest: int = 20) -> str:
    """The words every command starts with, when there are several and it is worth saying once
    (at least `shortest` characters): a long shared prefix repeated per feature is hundreds of tokens."""
    if len(commands) < 2:
        return ""
    common = commands[0]
    for command in commands[1:]:
        while not command.startswith(common):
            common = common[:-1]
    cut = common[: common.rfind(" ") + 1]  # at a word boundary, keeping the space
    return cut if len(cut) >= shortest and all(len(command) > len(cut) for command in commands) else ""
