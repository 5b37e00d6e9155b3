"""What the HTML report shows, read from a project's `.autonomous/`: state, events, logs, memory.

Read as plain JSON, line by line, and boiled down to a few lists, so that a project of 10,000
features reports in a second or two. Fields other issues add (a `worker` on events, a
feature's `footprint`, `regression_check` events) are used when present and not required.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from orchestrator.commands.report.report_model import FeatureRow, ReportData
from orchestrator.commands.report.report_timeline import Timeline
from orchestrator.json_types import JsonObject
from orchestrator.store.check_excerpt import error_excerpt
from orchestrator.store.disk.no_follow import open_no_follow
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.run_state import FeatureState
from shared_base.files import LinkRefused
from shared_base.tokens import estimate_tokens

CONTEXT_HEADING = "## Project Context"


def _json_lines(path: Path) -> Iterator[JsonObject]:
    try:
        handle = open_no_follow(path)
    except LinkRefused:
        raise  # the report stops, saying so: nothing is read through a link
    except OSError:
        return
    with io.TextIOWrapper(handle, encoding="utf-8", errors="replace") as text:
        for line in text:
            try:
                value = json.loads(line)
            except ValueError:
                continue  # a line torn by a kill: skip it, keep the rest
            if isinstance(value, dict):
                yield value


def _read_json(path: Path) -> JsonObject:
    try:
        with open_no_follow(path) as handle:
            value = json.loads(handle.read())
    except LinkRefused:
        raise
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def load_report_data(paths: ProjectPaths, names: dict[str, str] | None = None) -> ReportData:
    """The report's data for the project at `paths` (missing files give empty parts)."""
    state = _read_json(paths.state_file)
    data = ReportData(project=str(paths.root), run_id=str(state.get("runId", "")))
    data.totals = state.get("totals") or {}
    entries = state.get("features") or {}
    data.features = [_feature_row(fid, entry, names or {}) for fid, entry in entries.items()]
    _read_events(paths.events_log, data)
    contexts = context_sizes(paths.working_memory)
    for row in data.features:
        row.context_tokens = contexts.get(row.id)
    _failures_from_logs(paths, data.features, _output_left_out(entries))
    return data


def _feature_row(fid: str, entry: JsonObject, names: dict[str, str]) -> FeatureRow:
    verification = entry.get("lastVerification") or {}
    failure: list[str] = []
    if entry.get("status") != "passed" and verification and not verification.get("success"):
        failure = error_excerpt(verification.get("output"), verification.get("error"))
    if not failure and entry.get("reason") and entry.get("status") != "passed":
        failure = [str(entry["reason"])]
    return FeatureRow(id=fid, name=names.get(fid, ""), state=_state_of(entry), failure=failure,
                      footprint=footprint_files(entry.get("footprint")))


# The state's fields a row shows, the only ones read into its `FeatureState` (the rest are read from
# the entry as it is): validating whole entries took three times as long at 10,000 features.
_SHOWN = ("status", "attempts", "durationMs", "tokens", "costUsd")


def _state_of(entry: JsonObject) -> FeatureState:
    """The feature's state as the run saved it, its `_SHOWN` fields; of a damaged entry (not
    written by a run) the fields that read, the rest at their defaults."""
    shown = {key: entry[key] for key in _SHOWN if key in entry}
    try:
        return FeatureState.model_validate(shown)
    except ValidationError as err:
        unread = {error["loc"][0] for error in err.errors() if error["loc"]}
    try:
        return FeatureState.model_validate({key: value for key, value in shown.items() if key not in unread})
    except ValidationError:
        return FeatureState()


def footprint_files(footprint: object) -> list[str]:
    """The files of a state entry's `footprint` (`{"changed": [...], "check": [...]}`): what its
    checkpoint changed, then what its check reads, each once; a bare list (older states) as it is."""
    lists = [footprint.get("changed"), footprint.get("check")] if isinstance(footprint, dict) else [footprint]
    files = (str(name) for found in lists if isinstance(found, list) for name in found)
    return list(dict.fromkeys(files))


def _output_left_out(entries: JsonObject) -> set[str]:
    """Features whose last check failed, with its output left out of the state (the state keeps
    a settled feature's check output in its log only)."""
    return {fid for fid, entry in entries.items()
            if entry.get("status") != "passed" and (check := entry.get("lastVerification"))
            and not check.get("success") and not check.get("output")}


def _failures_from_logs(paths: ProjectPaths, rows: list[FeatureRow], output_in_log: set[str]) -> None:
    """From the logs, the failed check's error lines the state cannot give: those of a feature
    that passed after a retry (the state keeps only the last check), and those of a settled
    feature that failed (the state keeps its check's output in the log only)."""
    for row in rows:
        if row.id not in output_in_log and (row.failure or row.state.attempts < 2):
            continue
        history = _read_json(paths.feature_log(row.id)).get("attemptHistory") or []
        for attempt in reversed(history):
            check = attempt.get("verification") or {}
            if check and not check.get("success") and not check.get("skipped"):
                row.failure = error_excerpt(check.get("output"), check.get("error") or attempt.get("error"))
                break


def context_sizes(working_memory: Path) -> dict[str, int]:
    """Tokens of the `## Project Context` section in each feature's first prompt."""
    sizes: dict[str, int] = {}
    for entry in _json_lines(working_memory):
        if entry.get("type") != "text_input" or entry.get("featureId") in sizes:
            continue
        text = str(entry.get("text", ""))
        start = text.find(CONTEXT_HEADING)
        if start < 0:
            sizes[str(entry.get("featureId"))] = 0
            continue
        section = text[start:]
        end = section.find("\n## ", len(CONTEXT_HEADING))
        sizes[str(entry.get("featureId"))] = estimate_tokens(section if end < 0 else section[:end])
    return sizes


def _read_events(path: Path, data: ReportData) -> None:
    timeline = Timeline()
    for event in _json_lines(path):
        timeline.add(event)
    timeline.finish(data)
