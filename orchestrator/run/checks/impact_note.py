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

from orchestrator.spec.feature_spec import Feature, FeatureSpec
from orchestrator.store.run_state import RunState

MAX_NOTE_CHARS = 400
MAX_NAMED = 4  # later features named; more are counted
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


def builders_on(feature: Feature, spec: FeatureSpec, state: RunState) -> list[tuple[Feature, list[str]]]:
    """The later pending features that build on what `feature` will change, in spec order, each
    with the files of `feature`'s they meet (empty for a declared dependency on other files)."""
    mine = state.features.get(feature.id)
    writes = mine.prediction.will_write() if mine and mine.prediction else set()
    found = []
    for other in spec.features:
        entry = state.features.get(other.id)
        if other.id == feature.id or entry is None or entry.status != "pending":
            continue
        shared = writes & entry.prediction.files() if entry.prediction else set()
        if shared or feature.id in other.depends_on:
            found.append((other, sorted(shared)))
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
    more = f" and {len(builders) - MAX_NAMED} more" if len(builders) > MAX_NAMED else ""
    line = (f"Later features build on the files you change: {'; '.join(parts)}{more}. "
            "Keep what they need stable (extend, do not rename or reformat).")
    return line if len(line) <= MAX_NOTE_CHARS else line[:MAX_NOTE_CHARS - 1] + "…"
