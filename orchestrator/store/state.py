"""Run state on disk: the snapshot `.autonomous/state/execution-state.json` and the journal
beside it, written by `StateStore` alone (the model itself is `orchestrator.store.run_state`).

Every change is saved atomically. A state file that cannot be read is set aside (never
deleted) and rebuilt from the per-feature logs, so passed features survive any damage.

Money is journaled per model call (`record_spend`, replayed by `orchestrator.store.spend_journal`):
the worst case of a call before it is sent, what it cost once its answer arrives. A run killed at
any instant therefore never records less than the API billed, and `--max-cost` holds across resumes.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

from pydantic import Field, ValidationError
from pydantic_core import PydanticSerializationError

from orchestrator.llm.costs.spend import RunTotals
from orchestrator.llm.costs.spend import SpendEntry as ModelCallSpend
from orchestrator.spec.fields import is_safe_id
from orchestrator.store.disk.atomic import append_jsonl, set_aside, write_text_atomic
from orchestrator.store.disk.no_follow import lexists, read_no_follow
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.feature_log import UnusableLog, load_feature_log
from orchestrator.store.records import CamelModel
from orchestrator.store.run_state import FeatureState, RunState, SummarizationSchedule, now_ms
from orchestrator.store.spend_journal import CheckedSpendEntry, OpenCalls, close_all_unanswered, replay_spend
from shared_base.files import LinkRefused, TooLarge

# Files above this size are not state we wrote; refuse to parse them.
MAX_STATE_BYTES = 64 * 1024 * 1024
# The journal is folded into a snapshot before it grows past this, whatever the feature count.
MAX_JOURNAL_BYTES = MAX_STATE_BYTES // 2


class StateStore:
    """Loads and saves the run state of one project.

    The snapshot (`execution-state.json`) is rewritten atomically; between snapshots each
    change of one feature is appended to a journal, so the cost of a save does not grow
    with the number of features. Loading reads the snapshot and replays the journal. The
    snapshot is compacted when the journal is as long as the feature list, and at the end
    of every run.

    Several threads may write through one store (`--jobs N` workers), one write at a time (one
    valid journal line each); `freeze` ends every thread's writes but its own, for a run that
    gives up waiting for a worker stuck in a long call: its final snapshot is the last word.
    """

    def __init__(self, paths: ProjectPaths, on_warning: Callable[[str], None] = lambda _m: None) -> None:
        self.paths = paths
        self.on_warning = on_warning
        self._journal_lines = 0
        self._journal_bytes = 0
        # This load recovered state that is not on disk as read (a file set aside, or rebuilt
        # from the logs): it is saved at once.
        self._must_save = False
        self._lock = threading.RLock()
        self._owner: int | None = None  # once frozen: the only thread still heard

    def freeze(self) -> None:
        """From now on, writes from any thread but this one are dropped."""
        with self._lock:
            self._owner = threading.get_ident()

    def _heard(self) -> bool:
        return self._owner is None or self._owner == threading.get_ident()

    def load(self) -> RunState | None:
        """The saved state, None if there is none; a damaged file is set aside and rebuilt.

        Whatever was set aside, the recovered state is saved at once: the next reader finds
        it, instead of finding no state and starting over (losing the passed features).
        """
        path = self.paths.state_file
        self._must_save = False
        if not lexists(path):  # a link (a dangling one too) is refused below, never taken for no file
            if lexists(self.paths.state_journal):
                # No snapshot (killed before the first one, or lost): what the logs prove, then the journal.
                return self._keep_recovered(self._replay_journal(self.rebuild_from_logs()))
            recovered = self.rebuild_from_logs()
            if not recovered.features:
                return None
            # The state file was deleted but the logs still prove what was done: keep it.
            self._must_save = True
            self.on_warning(
                f"no state file {path}; rebuilt from feature logs ({recovered.count('passed')} passed features "
                "kept); to start over instead, run with --fresh"
            )
            return self._keep_recovered(recovered)
        try:
            text = _read_state(path).decode("utf-8")  # LinkRefused: a link here stops the command
            try:  # parsed straight into the model: a third less time than through json.loads
                state = RunState.model_validate_json(text)
            except ValidationError:  # the same failure again, for json's or pydantic's usual message
                state = RunState.model_validate(json.loads(text))
            _check_ids(state)
        except (ValueError, UnicodeDecodeError, ValidationError, RecursionError) as err:
            backup = set_aside(path, self.paths.backups_dir)
            self._must_save = True
            recovered = self.rebuild_from_logs()
            self.on_warning(
                f"state file {path} could not be read ({_reason(err)}); set aside as {backup}; "
                f"rebuilt from feature logs ({recovered.count('passed')} passed features kept)"
            )
            return self._keep_recovered(self._replay_journal(recovered))
        return self._keep_recovered(self._replay_journal(state))

    def _keep_recovered(self, state: RunState) -> RunState:
        if self._must_save:
            try:
                self.save(state)
            except OSError as err:
                self.on_warning(f"the recovered state could not be saved: {err}")
        return state

    def save(self, state: RunState) -> None:
        """Write a full snapshot and start a new journal."""
        with self._lock:
            if self._heard():
                self._save(state)

    def _save(self, state: RunState) -> None:
        state.updated_at = now_ms()
        write_text_atomic(self.paths.state_file, _snapshot_text(state))
        # Only after the snapshot is safely in place may the journal it contains go.
        self.paths.state_journal.unlink(missing_ok=True)
        self._journal_lines = self._journal_bytes = 0

    def record(self, state: RunState, feature_id: str | None = None, *, fsync: bool = True) -> None:
        """Persist a change to one feature (and the run-level counters) cheaply.

        `fsync=False` only flushes: enough to survive a killed process, and the next fsynced
        line carries it to disk. For steps that a resumed run can safely do again."""
        with self._lock:
            if self._heard():
                self._record(state, feature_id, fsync=fsync)

    def _record(self, state: RunState, feature_id: str | None, *, fsync: bool) -> None:
        if (feature_id is None or self._journal_lines >= max(64, len(state.features))
                or self._journal_bytes >= MAX_JOURNAL_BYTES):
            self.save(state)
            return
        state.updated_at = now_ms()
        entry = JournalEntry(
            feature=feature_id, state=state.features[feature_id], iteration=state.iteration,
            summarization=state.summarization, totals=state.totals, recent_completed=state.recent_completed,
            stop_reason=state.stop_reason, updated_at=state.updated_at,
        )
        append_jsonl(self.paths.state_journal, entry.dump(), fsync=fsync)
        self._journal_lines += 1
        self._journal_bytes = self.paths.state_journal.stat().st_size

    def record_spend(self, spend: ModelCallSpend) -> None:
        """Journal one model call's money at once: `{"kind": "reserve", ...}` before it is sent
        (its worst case), `"call"` with its usage and cost when its answer arrives, `"release"`
        when the API answered with an error. Loading adds the calls to the totals, and a
        reservation left open (killed mid-call) as its worst case.

        Flushed, not fsynced: a killed process loses none of it, and the next fsynced line of
        the same file (every feature record) carries it to disk.
        The entry is written as `SpendEntry.dump` gives it, and read back as a `spend_journal.CheckedSpendEntry`.
        """
        with self._lock:
            if self._heard():
                append_jsonl(self.paths.state_journal, {"spend": spend.dump()}, fsync=False)
                self._journal_lines += 1
                self._journal_bytes = self.paths.state_journal.stat().st_size

    def _replay_journal(self, state: RunState) -> RunState:
        path = self.paths.state_journal
        if not lexists(path):
            return state
        try:
            data = read_no_follow(path, MAX_STATE_BYTES)
        except TooLarge:
            backup = set_aside(path, self.paths.backups_dir)
            self._must_save = True
            self.on_warning(f"state journal {path} is larger than {MAX_STATE_BYTES} bytes; set aside as {backup}")
            return state
        except LinkRefused:
            raise  # never read through, nor passed over with a warning: the command stops, saying so
        except OSError as err:
            self.on_warning(f"state journal {path} could not be read: {err}")
            return state
        raw_lines = data.splitlines()
        damaged = _replay_lines(state, raw_lines, torn_tail=not data.endswith(b"\n"))
        self._journal_lines, self._journal_bytes = len(raw_lines), len(data)
        if damaged:
            # Its good lines are in `state` now; the file goes to the backups, never deleted.
            try:
                moved = str(set_aside(path, self.paths.backups_dir))
                self._must_save = True
            except OSError as err:
                moved = f"(could not be moved: {err})"
            self.on_warning(f"state journal {path}: {damaged} unreadable line(s) skipped; set aside as {moved}")
        return state

    def rebuild_from_logs(self) -> RunState:
        """A state holding what the per-feature logs prove: passed and failed features."""
        state = RunState()
        if not self.paths.logs_dir.is_dir():
            return state
        for log_path in sorted(self.paths.logs_dir.glob("*.json")):
            try:
                # A log proves only its own feature: load_feature_log checks that it names it.
                feature = load_feature_log(log_path).proven_state()
            except (OSError, UnusableLog):
                continue
            if feature is None or not is_safe_id(log_path.stem):
                continue
            state.features[log_path.stem] = feature
            state.iteration = max(state.iteration, feature.iteration or 0)
            # What was spent stays spent: --max-cost counts it after a rebuild too.
            state.totals = state.totals.model_copy(
                update={"tokens": state.totals.tokens + feature.tokens, "cost_usd": state.totals.cost_usd + feature.cost_usd})
        return state


class JournalEntry(CamelModel):
    """One feature's change between snapshots, with the run-level counters as they then stood."""

    feature: str
    state: FeatureState
    iteration: int
    summarization: SummarizationSchedule
    totals: RunTotals
    recent_completed: list[str] = Field(default_factory=list)
    stop_reason: str | None = None
    updated_at: int | None = None


def _replay_lines(state: RunState, raw_lines: list[bytes], *, torn_tail: bool) -> int:
    """Apply the journal's lines to `state`, in order; returns how many were damaged.

    A torn last line after a kill (`torn_tail`) is expected, and not counted as damage."""
    damaged = 0
    open_calls: OpenCalls = {}  # calls sent and not answered yet
    for number, raw in enumerate(raw_lines, start=1):
        try:
            line = json.loads(raw.decode("utf-8"))
            if isinstance(line, dict) and "spend" in line:
                replay_spend(state, CheckedSpendEntry.model_validate(line["spend"]), open_calls)
                continue
            entry = JournalEntry.model_validate(line)
            if not is_safe_id(entry.feature):
                raise ValueError(f"feature id {entry.feature[:60]!r} is not a safe id")
        except (ValueError, UnicodeDecodeError, RecursionError):  # ValidationError is a ValueError
            damaged += 0 if torn_tail and number == len(raw_lines) else 1
            continue
        state.features[entry.feature] = entry.state
        state.summarization, state.totals, state.iteration = entry.summarization, entry.totals, entry.iteration
        state.stop_reason = entry.stop_reason
        if "recent_completed" in entry.model_fields_set:
            state.recent_completed = [x for x in entry.recent_completed if is_safe_id(x)]
    # Killed while calls were in flight: the API may have billed them, so their worst case counts.
    close_all_unanswered(state, open_calls)
    return damaged


def _read_state(path: Path) -> bytes:
    """The snapshot's bytes, never through a link; ValueError (set aside) when it is too large."""
    try:
        return read_no_follow(path, MAX_STATE_BYTES)
    except TooLarge as err:
        raise ValueError(f"larger than {MAX_STATE_BYTES} bytes") from err


def _snapshot_text(state: RunState) -> str:
    """The state as compact JSON (indented, it is 40% larger: 74 MB at 100,000 failed features,
    over the read limit), serialized by pydantic in one pass. Going through `dump()` builds the
    whole state as Python objects first: at 10,000 features a save then took 60 MB more memory
    instead of 13, and 4 times as long. A text pydantic cannot encode (a lone surrogate, as
    from a file name that is not UTF-8) takes that slower way, which escapes it."""
    try:
        return state.model_dump_json(by_alias=True) + "\n"
    except PydanticSerializationError:
        return json.dumps(state.dump(), separators=(",", ":")) + "\n"


def _check_ids(state: RunState) -> None:
    """Feature ids become file names and terminal output: a state naming others is not ours."""
    for feature_id in [*state.features, *state.recent_completed, *state.summarization.unsummarized]:
        if not is_safe_id(feature_id):
            raise ValueError(f"feature id {feature_id[:60]!r} is not a safe id")


def _reason(err: BaseException) -> str:
    """Why a state file could not be read, in a few words."""
    if isinstance(err, RecursionError):
        return "its JSON is nested too deeply"
    if isinstance(err, UnicodeDecodeError):
        return f"not UTF-8 at byte {err.start}"
    text = str(err).strip().splitlines()
    return text[0][:200] if text else type(err).__name__
