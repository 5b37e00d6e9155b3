"""The Impact Agent's forward-looking line in a feature's prompt: the later pending features that
build on the files this one will change, and what their text says they need from them.

A later feature builds on this one when its predicted footprint (`impact.Prediction.files`)
meets the files this one is predicted to change, or when it declares a dependency on it. What it
needs is what its text names: a `code span`, a `function(`, or a quoted format ('line 3'), a few
of each. The line is bounded (`MAX_NOTE_CHARS`, about 100 tokens) and goes into the prompt beside
the assessment's line, so it is counted in the first request's size like the rest of the prompt.
"""

from __future__ import annotations

import re
import threading

from orchestrator.spec.feature_spec import Feature, FeatureSpec
from orchestrator.store.records import Prediction
from orchestrator.store.run_state import RunState

MAX_NOTE_CHARS = 400
MAX_NAMED = 4  # later features named; more are counted
MAX_COUNTED = 100  # counted at most ("and 96+ more"): a file a thousand features build on costs a hundred
MAX_NEEDS = 2  # what each needs, at most this many names
MAX_NEED_CHARS = 40
_NEEDS = re.compile(r"`([^`\n]{1,60})`|\b([A-Za-z_][\w.]{1,50}\()|'([^'\n]{1,60})'|\"([^\"\n]{1,60})\"")


def needs(feature: Feature, files: set[str]) -> list[str]:
    """What `feature`'s text names that it needs (code, calls, quoted formats), file names left out."""
    found: list[str] = []
    for match in _NEEDS.finditer(" ".join([feature.description, *feature.acceptance])):
        name = next(group for group in match.groups() if group)
        name = name + ")" if name.endswith("(") else name
        if name not in files and name not in found:
            found.append(name[:MAX_NEED_CHARS])
        if len(found) == MAX_NEEDS:
            break
    return found


class BuilderIndex:
    """Which features may build on a file: file -> ids whose prediction named it, and id -> ids that
    declare a dependency on it. A superset, checked against the state at each look-up, so that a
    feature's line costs the features it names, not the spec's length."""

    def __init__(self, spec: FeatureSpec, state: RunState) -> None:
        self.spec, self.state = spec, state
        self.positions = {feature.id: index for index, feature in enumerate(spec.features)}
        self.dependents: dict[str, list[str]] = {}
        for feature in spec.features:
            for dep in feature.depends_on:
                self.dependents.setdefault(dep, []).append(feature.id)
        self.by_file: dict[str, set[str]] = {}
        self.lock = threading.Lock()  # `--jobs N`: workers add and look up at once
        for feature_id, entry in list(state.features.items()):
            self.add(feature_id, entry.prediction)

    def add(self, feature_id: str, prediction: Prediction | None) -> None:
        with self.lock:
            for path in prediction.files() if prediction else ():
                self.by_file.setdefault(path, set()).add(feature_id)

    def candidates(self, feature_id: str, files: set[str]) -> set[str]:
        with self.lock:
            found = set(self.dependents.get(feature_id, ()))
            for path in files:
                found |= self.by_file.get(path, set())
            return found


_INDEXES: dict[tuple[int, int], tuple[FeatureSpec, RunState, BuilderIndex]] = {}
_INDEXES_LOCK = threading.Lock()


def builder_index(spec: FeatureSpec, state: RunState) -> BuilderIndex:
    """The index for this spec and state, built on first use (the run's, or the last command's)."""
    with _INDEXES_LOCK:
        kept = _INDEXES.get((id(spec), id(state)))
        if kept is not None and kept[0] is spec and kept[1] is state:
            return kept[2]
        _INDEXES.clear()  # one run a process: nothing older is asked about again
        index = BuilderIndex(spec, state)
        _INDEXES[(id(spec), id(state))] = (spec, state, index)
        return index


def builders_on(feature: Feature, spec: FeatureSpec, state: RunState) -> list[tuple[Feature, list[str]]]:
    """The later pending features that build on what `feature` will change, in spec order, each
    with the files of `feature`'s they meet (empty for a declared dependency on other files)."""
    mine = state.features.get(feature.id)
    writes = mine.prediction.will_write() if mine and mine.prediction else set()
    index = builder_index(spec, state)
    found = []
    candidates = sorted((index.positions[fid], fid) for fid in index.candidates(feature.id, writes) - {feature.id}
                        if fid in index.positions)
    for _position, other_id in candidates:
        entry = state.features.get(other_id)
        if entry is None or entry.status != "pending":
            continue
        other = spec.feature(other_id)
        shared = writes & entry.prediction.files() if entry.prediction else set()
        if shared or feature.id in other.depends_on:
            found.append((other, sorted(shared)))
            if len(found) == MAX_COUNTED:  # the line names a few and counts the rest up to here
                break
    return found


def forward_note(feature: Feature, spec: FeatureSpec, state: RunState) -> str:
    """One bounded line naming the later features that build on the files `feature` will change,
    or "" when none does."""
    builders = builders_on(feature, spec, state)
    if not builders:
        return ""
    parts = []
    for other, shared in builders[:MAX_NAMED]:
        wanted = needs(other, set(shared))
        detail = ", ".join([*shared[:2], *(f"needs {need}" for need in wanted)])
        parts.append(f"{other.id} ({detail})" if detail else other.id)
    plus = "+" if len(builders) == MAX_COUNTED else ""
    more = f" and {len(builders) - MAX_NAMED}{plus} more" if len(builders) > MAX_NAMED else ""
    line = (f"Later features build on the files you change: {'; '.join(parts)}{more}. "
            "Keep what they need stable (extend, do not rename or reformat).")
    return line if len(line) <= MAX_NOTE_CHARS else line[:MAX_NOTE_CHARS - 1] + "…"
