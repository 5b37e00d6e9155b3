"""The four context stores in `.autonomous/context/`: their file formats (one pydantic model
each, camelCase keys), loading with corruption handling, and atomic saving.

A store that is too large, not UTF-8, not JSON, or not the right shape is moved to `backups/`,
reported, and read as empty: the run goes on with less memory rather than stopping.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError
from pydantic.alias_generators import to_camel

from context_agent.agent_events import EventReporter
from shared_base.files import ContextFiles, TooLarge, read_bounded

ItemSource = Literal["report", "summarizer"]
# The stores are bounded (a 2000-token summary, 20 decisions, 10 failures, 100 constraints):
# a file far above that is not ours, and is set aside unread.
MAX_STORE_BYTES = 16 * 1024 * 1024


class _StoreModel(BaseModel):
    # Unknown keys are ignored so a newer version's files still load.
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


class RecentNote(_StoreModel):
    """An agent's report summary recorded since the last summarization."""

    feature_id: str
    summary: str
    recorded_at: int = 0
    """Epoch milliseconds."""


class RunningSummary(_StoreModel):
    """`running-summary.json`: the compressed project history (at most 2000 tokens)."""

    version: int = 1
    summary: str = ""
    """The latest summary: the summarizer's answer, or the deterministic fallback."""
    source: Literal["none", "model", "fallback"] = "none"
    model: str | None = None
    trigger: str | None = None
    updated_at: int = 0
    features_summarized: int = 0
    """Features covered by summarizations so far."""
    recent: list[RecentNote] = Field(default_factory=list)
    """Report summaries not yet folded into `summary`, oldest first."""


class Decision(_StoreModel):
    """One key decision, e.g. "Todo ids are UUID strings"."""

    id: str
    text: str
    feature_id: str
    category: str = ""
    source: ItemSource = "report"
    created_at: int = 0
    seq: int = 0
    """Order of recording (higher is newer); the eviction order."""


class KeyDecisions(_StoreModel):
    """`key-decisions.json`: at most 20 decisions, newest kept."""

    version: int = 1
    next_seq: int = 1
    decisions: list[Decision] = Field(default_factory=list)


class Failure(_StoreModel):
    """A failed check and how to avoid it next time."""

    id: str
    feature_id: str
    attempt: int = 1
    command: str = ""
    exit_code: int | None = None
    description: str
    prevention: str
    prevention_source: Literal["default", "agent", "summarizer"] = "default"
    """`default` until the agent's passing attempt or the summarizer says what was learned."""
    created_at: int = 0
    seq: int = 0
    resolved: bool = False
    """Its feature has passed since: shown only to the features whose files meet `files` (`injection_choice`)."""
    files: list[str] = Field(default_factory=list)
    """The files the failing attempt changed and its check names, relative to the project root."""


class FailureMemory(_StoreModel):
    """`failure-memory.json`: at most 10 failures, most recent kept."""

    version: int = 1
    next_seq: int = 1
    failures: list[Failure] = Field(default_factory=list)


class Constraint(_StoreModel):
    """A rule every later feature must follow, e.g. "Python 3.11 standard library only"."""

    id: str
    description: str
    feature_id: str = ""
    category: str = ""
    source: ItemSource = "report"
    created_at: int = 0
    seq: int = 0


class RetiredConstraint(Constraint):
    """A constraint the summarizer retired explicitly, kept for the record."""

    retired_at: int = 0
    retired_by: str = ""


class ActiveConstraints(_StoreModel):
    """`active-constraints.json`: at most `MAX_ACTIVE_CONSTRAINTS`; retired by the summarizer
    (by id), or at the limit by the rule in `recording.enforce_constraint_limit`."""

    version: int = 1
    next_seq: int = 1
    constraints: list[Constraint] = Field(default_factory=list)
    retired: list[RetiredConstraint] = Field(default_factory=list)
    _index: Any = PrivateAttr(default=None)
    """`store_updates`'s index of `constraints`, with the list it was built for."""


@dataclass
class ContextStores:
    """The four stores as loaded together."""

    summary: RunningSummary
    decisions: KeyDecisions
    failures: FailureMemory
    constraints: ActiveConstraints
    on_disk: dict[str, str] = field(default_factory=dict)
    """Each store's file text as read or last written: a store that did not change is not
    written again (each write costs two fsyncs)."""


Store = TypeVar("Store", bound=_StoreModel)
StoreName = Literal["summary", "decisions", "failures", "constraints"]


def store_path(files: ContextFiles, name: StoreName) -> Path:
    """The file of one store (the paths themselves live in `ContextFiles`)."""
    return {
        "summary": files.running_summary,
        "decisions": files.key_decisions,
        "failures": files.failure_memory,
        "constraints": files.active_constraints,
    }[name]


def load_stores(files: ContextFiles, events: EventReporter) -> ContextStores:
    """All four stores; a missing one is empty, a corrupted one is set aside and empty."""
    on_disk: dict[str, str] = {}
    summary = _load(files, "summary", RunningSummary, events, on_disk)
    decisions = _load(files, "decisions", KeyDecisions, events, on_disk)
    failures = _load(files, "failures", FailureMemory, events, on_disk)
    constraints = _load(files, "constraints", ActiveConstraints, events, on_disk)
    return ContextStores(summary, decisions, failures, constraints, on_disk)


def _load(
    files: ContextFiles, name: StoreName, model: type[Store], events: EventReporter, on_disk: dict[str, str]
) -> Store:
    store, text = _read_store(store_path(files, name), model, files, events)
    if text is not None:
        on_disk[name] = text
    return store


def load_store(path: Path, model: type[Store], files: ContextFiles, events: EventReporter) -> Store:
    """One store from `path`, or an empty one if it is missing, unreadable or corrupted."""
    return _read_store(path, model, files, events)[0]


def _read_store(
    path: Path, model: type[Store], files: ContextFiles, events: EventReporter
) -> tuple[Store, str | None]:
    """The store and the file's text (None when there was no usable file)."""
    try:
        raw = read_bounded(path, MAX_STORE_BYTES)
    except TooLarge as exc:
        _set_aside_corrupt(path, str(exc), files, events)
        return model(), None
    except FileNotFoundError:
        return model(), None
    except OSError as exc:
        events.emit(
            "context.store_unreadable",
            f"cannot read {path.name} ({exc}); using an empty store for now",
            file=str(path),
            error=str(exc),
        )
        return model(), None
    try:
        text = raw.decode("utf-8")
        return model.model_validate_json(text), text
    except UnicodeDecodeError:
        problem = "not UTF-8"
    except ValidationError as exc:
        first = exc.errors()[0]
        if first["type"] == "json_invalid":
            problem = f"not valid JSON ({first['msg']})"
        else:
            where = ".".join(str(part) for part in first["loc"]) or "top level"
            problem = (
                f"not a {model.__name__} store "
                f"({exc.error_count()} problems; {where}: {first['msg']})"
            )
    _set_aside_corrupt(path, problem, files, events)
    return model(), None


def save_stores(files: ContextFiles, stores: ContextStores, *names: StoreName) -> None:
    """Write the named stores (all four when none are named) that changed since they were
    read, each atomically. One store that cannot be written does not keep the others from
    being written; its error is raised after."""
    error: OSError | None = None
    for name in names or ("summary", "decisions", "failures", "constraints"):
        text = store_text(getattr(stores, name))
        if stores.on_disk.get(name) == text:
            continue
        try:
            files.write_text(store_path(files, name), text)
        except OSError as exc:
            error = error or exc
        else:
            stores.on_disk[name] = text
    if error is not None:
        raise error


def save_store(files: ContextFiles, name: StoreName, store: _StoreModel) -> None:
    """Write one store atomically."""
    files.write_text(store_path(files, name), store_text(store))


def store_text(store: _StoreModel) -> str:
    """A store's file content: indented JSON, camelCase keys."""
    return json.dumps(store.model_dump(by_alias=True, mode="json"), indent=2, ensure_ascii=False) + "\n"


def _set_aside_corrupt(path: Path, problem: str, files: ContextFiles, events: EventReporter) -> None:
    try:
        backup: Path | None = files.set_aside(path)
    except OSError as exc:
        backup = None
        problem = f"{problem}; could not move it aside: {exc}"
    where = f"moved to {backup}" if backup else "left in place"
    events.emit(
        "context.store_corrupt",
        f"{path.name} is {problem}; {where}; continuing with an empty store",
        file=str(path),
        backup=str(backup) if backup else None,
        error=problem,
    )
