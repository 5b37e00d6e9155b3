"""`status` and `logs`: the project's records as tables, under a second at 10,000 features.

Both read the state, not the 10,000 feature logs, and import no more than they draw with (no
agent, no spec, no SDK): at 10,000 features, reading and checking every log took half a second
of `logs`, and importing the other inspection commands a tenth of `status`.
"""

from __future__ import annotations

import json
import os
import sys

from pydantic_core import PydanticSerializationError

from orchestrator.commands.rendering.cost_words import worst_case_part
from orchestrator.commands.rendering.text_table import render_table
from orchestrator.json_types import JsonObject
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.feature_log import MAX_LOG_BYTES, UnusableLog, load_feature_log, log_json
from orchestrator.store.run_state import RunState, hit_rate_text
from orchestrator.store.state import StateStore
from orchestrator.store.state_peek import peek_features
from orchestrator.user_errors import UsageError

_NUMBERS = frozenset({"attempts", "tokens", "cost (USD)"})
_REASON_WIDTH = 100  # cells; the whole reason is in `status --json`
_TOKEN_KEYS = (("input", "input"), ("output", "output"), ("cacheRead", "cache_read"), ("cacheWrite", "cache_write"))

# Up to this many features the table lists them all; beyond, only those not passed (--all: all).
FULL_TABLE_UP_TO = 50


def warn(message: str) -> None:
    """A warning of a command on the records, on stderr."""
    sys.stderr.write(f"orchestrate: warning: {message}\n")


def shown(value: object) -> str:
    """A value read from a file, safe for the terminal: control characters are escaped."""
    text = str(value)
    return text if text.isprintable() else repr(text)[1:-1]


def load_state(paths: ProjectPaths) -> RunState | None:
    """The saved state (a damaged one set aside and rebuilt, with a warning), None if none."""
    return StateStore(paths, on_warning=warn).load()


def print_status(paths: ProjectPaths, json_output: bool, show_all: bool = False) -> int:
    """The saved state: one line per feature, then the counts and totals, and the footprint
    predictions' hit rate when the run made predictions. Reads the state only
    (snapshot and journal), never the feature logs, and draws in time linear in the features."""
    state = load_state(paths)
    if state is None:
        raise UsageError(f"no run state in {paths.autonomous} (start one with: orchestrate run SPEC)")
    if json_output:
        sys.stdout.write(_state_json(state))
        return 0
    rows = [
        (feature_id, entry.status, str(entry.attempts), f"{entry.tokens.total:,}", f"{entry.cost_usd:.4f}",
         shown(entry.reason or ""))
        for feature_id, entry in state.features.items()
        if show_all or len(state.features) <= FULL_TABLE_UP_TO or entry.status != "passed"
    ]
    sys.stdout.write(render_table(
        ("feature", "status", "attempts", "tokens", "cost (USD)", "reason"), rows,
        title=shown(f"run {state.run_id} — {state.spec_path}"), right=_NUMBERS, max_width={"reason": _REASON_WIDTH},
    ))
    counts = {s: state.count(s) for s in ("passed", "failed", "needs_review", "blocked", "pending", "in_progress")}
    if len(rows) < len(state.features):
        sys.stdout.write(f"{len(state.features) - len(rows):,} passed features not listed (--all lists them)\n")
    sys.stdout.write(
        ", ".join(f"{n} {s}" for s, n in counts.items() if n)
        + f"; {state.totals.tokens.total:,} tokens, ${state.totals.cost_usd:.4f}"
        + (f" ({worst})" if (worst := worst_case_part(
            state.totals.cost_usd, state.totals.unconfirmed_cost_usd, state.totals.unconfirmed_calls)) else "")
        + (f"; stopped: {shown(state.stop_reason)}" if state.stop_reason else "") + "\n"
    )
    if any(entry.prediction is not None for entry in state.features.values()):  # the Impact Agent's
        sys.stdout.write(hit_rate_text(state.features.values()) + "\n")
    return 0


def _state_json(state: RunState) -> str:
    try:  # in one pass, as the state is saved (see state._snapshot_text)
        return state.model_dump_json(by_alias=True, indent=2) + "\n"
    except PydanticSerializationError:
        return json.dumps(state.dump(), indent=2) + "\n"


def print_logs(paths: ProjectPaths, feature_id: str | None, json_output: bool = False) -> int:
    """One feature's log for a human (`json_output`: the file's JSON), or the list of the logs: a
    line per log file, in the state's order (the spec's, as `status` lists them), then the rest."""
    if feature_id:
        return _print_one_log(paths, feature_id, json_output)
    if not paths.logs_dir.is_dir():
        raise UsageError(f"no feature logs in {paths.logs_dir} yet")
    found = {entry.name: entry for entry in os.scandir(paths.logs_dir) if entry.name.endswith(".json")}
    if not found:
        raise UsageError(f"no feature logs in {paths.logs_dir} yet")
    recorded = peek_features(paths) or {}
    in_state = [f"{feature}.json" for feature in recorded if f"{feature}.json" in found]
    # Names sorted as strings, not as Paths: at 10,000 logs, Path comparisons alone took 0.3 s.
    others = sorted(set(found) - set(in_state))
    rows = []
    for name in in_state + others:
        entry = found[name]
        stem = name[: -len(".json")] if name != ".json" else name  # as Path.stem has it
        row = _row_from_state(recorded.get(stem)) if _plain_file(entry) else None
        rows.append([shown(stem), *(row or _row_from_log(paths, name))])
    sys.stdout.write(render_table(("feature", "status", "attempts", "tokens", "cost (USD)"), rows, right=_NUMBERS))
    return 0


def _print_one_log(paths: ProjectPaths, feature_id: str, json_output: bool) -> int:
    if not all(ch.isalnum() or ch in "._-" for ch in feature_id) or feature_id in (".", ".."):
        raise UsageError(f"{feature_id!r} is not a feature id")
    path = paths.feature_log(feature_id)
    try:
        log = load_feature_log(path)
    except FileNotFoundError:
        raise UsageError(f"no log for feature {feature_id!r} in {paths.logs_dir} (see: orchestrate logs)") from None
    except (OSError, UnusableLog) as err:
        raise UsageError(f"the log of feature {feature_id!r}, {path}, cannot be shown: {err}") from err
    if json_output:
        # As the run wrote it; dumped again, so no raw control character reaches the terminal.
        sys.stdout.write(log_json(log, as_read=True))
    else:
        from orchestrator.commands.log_view import log_text  # a human view: only when one is shown

        sys.stdout.write(log_text(log))
    return 0


def _plain_file(entry: os.DirEntry[str]) -> bool:
    """A regular file, not a link, of a log's size: one whose row the state can give."""
    try:
        return entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_size <= MAX_LOG_BYTES
    except OSError:
        return False


def _row_from_state(entry: JsonObject | None) -> list[str] | None:
    """The row as the feature's log gives it (the log is written from this entry), or None when
    the state has no such feature, or an entry not as the run writes it: then the log is read."""
    if not isinstance(entry, dict):
        return None
    status, attempts = entry.get("status", "pending"), entry.get("attempts", 0)
    cost = entry.get("costUsd", entry.get("cost_usd", 0.0))
    tokens = entry.get("tokens", {})
    if not isinstance(tokens, dict):
        return None
    counts = [tokens.get(camel, tokens.get(snake, 0)) for camel, snake in _TOKEN_KEYS]
    numbers = [count for count in counts if type(count) is int]
    if not (isinstance(status, str) and type(attempts) is int and isinstance(cost, (int, float))
            and not isinstance(cost, bool) and len(numbers) == len(counts)):
        return None
    # The log holds the cost rounded to 6 places (`build_feature_log`): shown the same way here.
    return [shown(status), shown(attempts), f"{sum(numbers):,}", f"{round(cost, 6):.4f}"]


def _row_from_log(paths: ProjectPaths, name: str) -> list[str]:
    try:
        log = load_feature_log(paths.logs_dir / name)
        return [shown(log.status), shown(log.attempts), f"{log.tokens.total:,}", f"{log.cost_usd:.4f}"]
    except (OSError, UnusableLog) as err:
        return [shown(f"(unusable log: {err})"), "", "", ""]
