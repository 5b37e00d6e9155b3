"""`orchestrate report` with no option: the text summary of the project's last run.

The same closing line the run printed (outcome, counts, tokens, cost, time), its stop reason,
its final verification, and the features that did not pass, read from the state and from
`events.jsonl` backwards, no further than the last run's start.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from orchestrator.commands.rendering.output import describe
from orchestrator.store.disk.no_follow import lexists, open_no_follow, read_no_follow
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.event_kinds import FinalVerification, RunFinished, RunStarted, parse_event
from orchestrator.user_errors import EXIT_OK, UsageError

_BLOCK = 1 << 16
_SHOWN = 20  # features not passed, listed by id; the rest are counted
_MAX_STATE_BYTES = 64 * 1024 * 1024  # as `orchestrator.store.state.MAX_STATE_BYTES`


def print_last_run(paths: ProjectPaths) -> int:
    """Print the summary of the last run recorded in the project at `paths`."""
    if not lexists(paths.state_file):
        raise UsageError(f"no run recorded in {paths.root} (no {paths.state_file}); run `orchestrate run SPEC` first")
    state = json.loads(read_no_follow(paths.state_file, _MAX_STATE_BYTES))  # a link: LinkRefused, exit 2
    finished, final = _last_run_events(paths.events_log)
    name = _project_name(str(state.get("specPath", "")))
    lines = [f"{name}: " if name else ""]
    if finished is None:
        lines[0] += "the last run has not finished (still running, or killed); `orchestrate status` shows where it is"
    else:
        lines[0] += describe(finished) or ""
        if finished.message:
            lines.append(f"  {finished.message}")
    if final is not None:
        lines.append(describe(final) or "")
    lines += _not_passed(state)
    lines.append(f"run {state.get('runId', '?')} of the spec {state.get('specPath', '?')}")
    print("\n".join(line for line in lines if line))
    return EXIT_OK


def _project_name(spec_path: str) -> str:
    try:
        spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    return str(spec.get("project") or Path(spec_path).stem) if isinstance(spec, dict) else ""


def _not_passed(state: dict[str, object]) -> list[str]:
    features = state.get("features")
    if not isinstance(features, dict):
        return []
    by_status: dict[str, list[str]] = {}
    for fid, entry in features.items():
        status = entry.get("status") if isinstance(entry, dict) else None
        if status and status != "passed":
            by_status.setdefault(str(status), []).append(str(fid))
    lines = []
    for status, ids in by_status.items():
        more = f" and {len(ids) - _SHOWN} more" if len(ids) > _SHOWN else ""
        lines.append(f"{status}: {', '.join(ids[:_SHOWN])}{more}")
    return lines


def _last_run_events(log: Path) -> tuple[RunFinished | None, FinalVerification | None]:
    """The last run's `run_finished` and `final_verification` (None for what it has not)."""
    finished: RunFinished | None = None
    final: FinalVerification | None = None
    for line in _lines_backwards(log):
        if '"type":"run_' not in line and '"type":"final_verification"' not in line:
            continue  # most lines: no need to parse them
        try:
            event = parse_event(json.loads(line))
        except (ValueError, ValidationError):
            continue  # a torn last line, or an event kind this version does not know
        if isinstance(event, RunStarted):
            break  # the last run's first line: nothing of it is further back
        if isinstance(event, RunFinished) and finished is None:
            finished = event
        elif isinstance(event, FinalVerification) and final is None:
            final = event
            if finished is not None:
                break  # a run verifies just before it finishes
    return finished, final


def _lines_backwards(path: Path) -> Iterator[str]:
    """The lines of `path`, last first, read a block at a time from the end."""
    if not lexists(path):
        return
    with open_no_follow(path) as handle:
        position = handle.seek(0, os.SEEK_END)
        rest = b""
        while position > 0:
            step = min(_BLOCK, position)
            position -= step
            handle.seek(position)
            block = handle.read(step) + rest
            lines = block.split(b"\n")
            rest = lines[0]
            for raw in reversed(lines[1:]):
                if raw.strip():
                    yield raw.decode("utf-8", "replace")
        if rest.strip():
            yield rest.decode("utf-8", "replace")
