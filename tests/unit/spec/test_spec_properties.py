"""Property-based tests: whatever the spec file holds, loading it fails only with a
SpecError, and anything accepted is safe to use (ids as file names) and round-trips."""

from __future__ import annotations

import json
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orchestrator.spec.feature_spec import FeatureSpec
from orchestrator.spec.load import dump_spec, parse_spec
from orchestrator.spec.spec_errors import SpecError

FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def parses_or_spec_error(raw: bytes) -> FeatureSpec | None:
    try:
        return parse_spec(raw).spec
    except SpecError as exc:
        assert exc.problems, "a SpecError always says what is wrong"
        str(exc)  # rendering the message must not fail either
        return None


json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)

# Text meant to break things: separators, dots, controls, surrogates, NUL, non-ASCII.
nasty_text = st.lists(
    st.sampled_from([*"aZ09._-/\\ \x00\n\x1b\x7f\u00e9\u202e\ud800:*", "..", "con"]), max_size=8
).map("".join) | st.text(max_size=12)

field_names = st.sampled_from(
    ["id", "name", "description", "category", "acceptance", "verify", "depends_on",
     "max_attempts", "priority", "protected", "passes", "steps", "colour"]
)
small_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=3), max_leaves=4)
feature_like = st.dictionaries(field_names, small_values | nasty_text, max_size=6)


@FAST
@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_raise_anything_but_spec_error(raw: bytes) -> None:
    parses_or_spec_error(raw)


@FAST
@given(json_values)
def test_arbitrary_json_never_raises_anything_but_spec_error(value: Any) -> None:
    parses_or_spec_error(json.dumps(value).encode())


@FAST
@given(
    st.lists(feature_like, max_size=4),
    st.dictionaries(st.sampled_from(["project", "description", "verify", "max_attempts", "x"]), small_values, max_size=3),
    st.booleans(),
)
def test_spec_shaped_json_never_raises_anything_but_spec_error(
    features: list[dict[str, Any]], top: dict[str, Any], bare_array: bool
) -> None:
    value: Any = features if bare_array else {**top, "features": features}
    parses_or_spec_error(json.dumps(value).encode())


@FAST
@given(st.lists(nasty_text, min_size=1, max_size=4))
def test_accepted_ids_are_always_safe_file_names(ids: list[str]) -> None:
    features = [{"id": fid, "name": "n", "description": "d"} for fid in ids]
    spec = parses_or_spec_error(json.dumps({"features": features}).encode())
    if spec is None:
        return
    for fid in spec.ids():
        assert fid not in ("", ".", "..")
        assert not any(ch in fid for ch in "/\\\x00:*")
        assert all(32 < ord(ch) < 127 for ch in fid)
        # As a log file name it stays directly inside the logs directory, on any OS.
        for logs in (PurePosixPath("/p/.autonomous/logs"), PureWindowsPath("C:/p/.autonomous/logs")):
            log = logs / f"{fid}.json"
            assert log.parent == logs and log.name == f"{fid}.json"


# --- valid specs round-trip ------------------------------------------------------------

safe_ids = st.from_regex(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,19}", fullmatch=True)
words = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), min_size=1, max_size=30).filter(str.strip)
# A name is one line of a commit message: no control character.
names = st.text(alphabet=st.characters(blacklist_categories=["Cs", "Cc"]), min_size=1, max_size=30).filter(str.strip)
commands = st.text(alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), min_size=1, max_size=30).filter(str.strip)


@st.composite
def valid_specs(draw: st.DrawFn) -> dict[str, Any]:
    ids = draw(st.lists(safe_ids, min_size=1, max_size=6, unique_by=str.lower))
    features = []
    for i, fid in enumerate(ids):
        obj: dict[str, Any] = {"id": fid, "name": draw(names), "description": draw(words)}
        optional = {
            "category": words,
            "acceptance": st.lists(st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=20), max_size=3),
            "verify": commands,
            # Only earlier features: the graph stays acyclic.
            "depends_on": st.lists(st.sampled_from(ids[:i]), unique=True, max_size=3) if i else st.just([]),
            "max_attempts": st.integers(1, 100),
            "priority": st.integers(-(10**12), 10**12),
            "protected": st.lists(commands, max_size=2),
            "passes": st.booleans(),
        }
        for key in draw(st.sets(st.sampled_from(sorted(optional)))):
            obj[key] = draw(optional[key])
        features.append(obj)
    top: dict[str, Any] = {"features": features}
    if draw(st.booleans()):
        top["verify"] = draw(commands)
    if draw(st.booleans()):
        top["max_attempts"] = draw(st.integers(1, 100))
    return top


@FAST
@given(valid_specs())
def test_a_valid_spec_loads_and_round_trips(value: dict[str, Any]) -> None:
    loaded = parse_spec(json.dumps(value).encode())
    assert loaded.source_format == "native"
    assert loaded.spec.ids() == [f["id"] for f in value["features"]]
    again = parse_spec(dump_spec(loaded.spec).encode())
    assert again.spec.features == loaded.spec.features
    assert [f.text_hash() for f in again.spec.features] == [f.text_hash() for f in loaded.spec.features]


quickstart_entries = st.fixed_dictionaries(
    {"description": words},
    optional={"category": words, "steps": st.lists(st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=20), max_size=3), "passes": st.booleans()},
)


@FAST
@given(st.lists(quickstart_entries, min_size=1, max_size=12))
def test_a_valid_quickstart_list_keeps_order_steps_and_passes(entries: list[dict[str, Any]]) -> None:
    loaded = parse_spec(json.dumps(entries).encode())
    assert loaded.source_format == "quickstart"
    for n, (entry, feature) in enumerate(zip(entries, loaded.spec.features, strict=True), start=1):
        assert feature.id == f"feature-{n:03d}"
        assert feature.description == entry["description"]
        assert feature.acceptance == entry.get("steps", [])
        assert feature.passes == entry.get("passes", False)
        assert feature.name.strip() and len(feature.name) <= 63
    # A quickstart spec, written back out natively, loads to the same features.
    assert parse_spec(dump_spec(loaded.spec).encode()).spec.features == loaded.spec.features
