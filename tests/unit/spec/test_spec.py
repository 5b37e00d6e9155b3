"""The feature spec: what a user sees when a spec is good, and when it is not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from orchestrator.spec.feature_spec import Feature, FeatureSpec
from orchestrator.spec.fields import MAX_FEATURES, MAX_SPEC_BYTES
from orchestrator.spec.load import dump_spec, load_spec, parse_spec
from orchestrator.spec.quickstart import derive_name
from orchestrator.spec.spec_errors import SpecError

DATA = Path(__file__).parents[2] / "data" / "specs"
REPO_SPECS = Path(__file__).parents[3] / "specs"


def feature(fid: str, **extra: Any) -> dict[str, Any]:
    return {"id": fid, "name": f"Feature {fid}", "description": f"Build {fid}.", **extra}


def spec_bytes(*features: dict[str, Any], **top: Any) -> bytes:
    return json.dumps({**top, "features": list(features)}).encode()


def problems_of(raw: bytes) -> list[str]:
    with pytest.raises(SpecError) as caught:
        parse_spec(raw, source="spec.json")
    return caught.value.problems


# --- valid specs ------------------------------------------------------------------------


def test_the_product_spec_example_loads_with_its_defaults() -> None:
    loaded = load_spec(DATA / "todo-api.json")
    spec = loaded.spec
    assert loaded.source_format == "native"
    assert loaded.path == DATA / "todo-api.json"
    assert loaded.warnings == []
    assert spec.project == "todo-api"
    assert spec.ids() == ["todo-model", "todo-store", "todo-api"]
    model, store, api = spec.features
    assert model.acceptance == ["Todo(title='x').done is False"]
    assert store.category == "backend" and store.priority == 1 and store.depends_on == ["todo-model"]
    assert api.protected == ["tests/test_api.py"] and api.passes is False
    assert spec.feature("todo-store") is store


def test_a_feature_without_its_own_check_or_limit_falls_back_to_the_top_level() -> None:
    spec = load_spec(DATA / "todo-api.json").spec
    model, store, _ = spec.features
    assert spec.check_command(model) == "pytest -q tests/test_model.py"
    assert spec.check_command(store) == "pytest -q"
    assert spec.attempts_for(model) == 3
    assert spec.attempts_for(store) == 3  # neither the feature nor the top level sets it

    spec = parse_spec(spec_bytes(feature("a"), feature("b", max_attempts=7), max_attempts=5)).spec
    assert [spec.attempts_for(f) for f in spec.features] == [5, 7]
    assert spec.check_command(spec.features[0]) is None


def test_unknown_feature_id_is_a_key_error() -> None:
    spec = parse_spec(spec_bytes(feature("a"))).spec
    with pytest.raises(KeyError):
        spec.feature("nope")


def test_the_hash_is_of_the_files_bytes(tmp_path: Path) -> None:
    import hashlib

    path = tmp_path / "my-app.json"
    raw = spec_bytes(feature("a"))
    path.write_bytes(raw)
    loaded = load_spec(path)
    assert loaded.sha256 == hashlib.sha256(raw).hexdigest()
    assert loaded.spec.project == "my-app"  # no "project" key: the file's stem


def test_a_byte_order_mark_is_tolerated() -> None:
    assert parse_spec(b"\xef\xbb\xbf" + spec_bytes(feature("a"))).spec.ids() == ["a"]


def test_text_hash_changes_with_the_features_text_only() -> None:
    base = Feature.model_validate(feature("a", verify="pytest"))
    same = Feature.model_validate({**feature("a", verify="pytest"), "priority": 4, "max_attempts": 9})
    reordered = Feature.model_validate(dict(reversed(list(feature("a", verify="pytest").items()))))
    assert base.text_hash() == same.text_hash() == reordered.text_hash()
    for change in ({"description": "Other."}, {"acceptance": ["x"]}, {"verify": "make"}, {"depends_on": ["b"]}, {"category": "ui"}):
        changed = Feature.model_validate({**feature("a", verify="pytest"), **change})
        assert changed.text_hash() != base.text_hash(), change


def test_dump_then_parse_gives_the_same_spec() -> None:
    spec = load_spec(DATA / "todo-api.json").spec
    assert parse_spec(dump_spec(spec).encode()).spec == spec


def test_a_spec_built_in_code_keeps_the_same_rules() -> None:
    with pytest.raises(ValidationError, match="duplicate id"):
        FeatureSpec(features=[Feature(id="a", name="A", description="d"), Feature(id="a", name="B", description="d")])
    with pytest.raises(ValidationError):
        FeatureSpec(features=[])


def test_feature_lookup_survives_a_changed_list() -> None:
    spec = parse_spec(spec_bytes(feature("a"), feature("b"))).spec
    spec.features.insert(0, Feature.model_validate(feature("c")))
    assert spec.feature("b").id == "b" and spec.feature("c").id == "c"


# Every spec the repository ships, however deep (specs/<name>/spec.json). An empty list fails
# collection (empty_parameter_set_mark = fail_at_collect), so this can never pass by running nothing.
@pytest.mark.parametrize(
    "path", sorted(REPO_SPECS.glob("**/spec.json")), ids=lambda p: p.parent.relative_to(REPO_SPECS).as_posix()
)
def test_every_example_spec_in_the_repository_is_valid(path: Path) -> None:
    loaded = load_spec(path)
    assert loaded.warnings == [] and loaded.spec.features


def test_a_test_parametrized_over_nothing_fails_collection(pytestconfig: pytest.Config) -> None:
    assert pytestconfig.getini("empty_parameter_set_mark") == "fail_at_collect"


# --- the quickstart feature_list.json --------------------------------------------------


def test_the_quickstart_array_becomes_native_features() -> None:
    loaded = load_spec(DATA / "feature_list.json")
    first, second = loaded.spec.features
    assert loaded.source_format == "quickstart"
    assert loaded.spec.project == "feature_list"
    assert (first.id, second.id) == ("feature-001", "feature-002")
    assert first.name == "New chat button creates a fresh conversation and focuses..."
    assert second.name == "Sidebar collapses on narrow screens"
    assert first.category == "functional" and second.category == "style"
    assert first.acceptance[1] == "Step 2: Click the 'New Chat' button"
    assert (first.passes, second.passes) == (True, False)
    assert first.description.startswith("New chat button creates a fresh conversation")


def test_quickstart_ids_count_past_three_digits() -> None:
    entries = [{"category": "c", "description": f"Thing {i}", "steps": [], "passes": False} for i in range(1001)]
    ids = parse_spec(json.dumps(entries).encode()).spec.ids()
    assert ids[0] == "feature-001" and ids[998] == "feature-999" and ids[1000] == "feature-1001"


def test_quickstart_entries_are_checked_with_their_own_locations() -> None:
    raw = json.dumps(
        [
            {"category": "functional", "description": "ok", "steps": [], "passes": False},
            {"category": "functional", "steps": ["s"], "passes": "no"},
            {"category": "", "description": "x", "steps": "click", "passes": False},
            "not an entry",
        ]
    ).encode()
    assert problems_of(raw) == [
        "[1].description: required field is missing",
        '[1].passes: must be true or false, got the string "no"',
        "[2].category: must not be empty",
        '[2].steps: must be a list, got the string "click"',
        '[3]: must be an object, got the string "not an entry"',
    ]


def test_quickstart_unknown_keys_are_warnings() -> None:
    raw = json.dumps([{"category": "c", "description": "d", "steps": [], "passes": False, "id": "x"}]).encode()
    assert parse_spec(raw).warnings[0] == "[0].id: unknown key (ignored)"


@pytest.mark.parametrize(
    ("description", "name"),
    [
        ("Short one", "Short one"),
        ("First line\nsecond line", "First line"),
        ("  spaced   out\ttext  ", "spaced out text"),
        ("word " * 30, "word word word word word word word word word word word word..."),
        ("x" * 100, "x" * 60 + "..."),
    ],
)
def test_a_quickstart_name_is_the_start_of_the_description(description: str, name: str) -> None:
    assert derive_name(description) == name


# --- bad specs: every problem, located -------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param(b"", 'the file is empty (a spec is a JSON object with a "features" list)', id="empty"),
        pytest.param(b" \n\t", 'the file is empty (a spec is a JSON object with a "features" list)', id="blank"),
        pytest.param(b'{"features": [\n  {"id": "a",}\n]}', "line 2, column 14: not valid JSON: Expecting property name enclosed in double quotes", id="not-json"),
        pytest.param(b'{"features": "caf\xe9"}', "byte 17: not UTF-8 (invalid continuation byte, 0xe9); save the file as UTF-8", id="latin-1"),
        pytest.param("{}".encode("utf-16"), "the file is UTF-16, not UTF-8 (save it as UTF-8)", id="utf-16"),
        pytest.param(b'"just a string"', 'the top level must be an object with a "features" list, or an array of features (quickstart feature_list.json); got the string "just a string"', id="top-string"),
        pytest.param(b"null", 'the top level must be an object with a "features" list, or an array of features (quickstart feature_list.json); got null', id="top-null"),
        pytest.param(b"{}", 'features: required field is missing (add a "features" list)', id="no-features"),
        pytest.param(b'{"features": []}', "features: the feature list is empty (add at least one feature)", id="empty-features"),
        pytest.param(b"[]", "the feature list is empty (add at least one feature)", id="empty-quickstart"),
        pytest.param(b'{"features": {"a": {}}}', "features: must be a list of features, got an object", id="features-object"),
        pytest.param(b"[" * 100_000 + b"]" * 100_000, "the JSON is nested too deeply (a spec needs only a few levels)", id="deep-nesting"),
        pytest.param(b'{"features": [{"id": ' + b"[" * 50_000 + b"]" * 50_000 + b"}]}", "the JSON is nested too deeply (a spec needs only a few levels)", id="deep-in-feature"),
        pytest.param(b'{"features": [{"priority": ' + b"9" * 5000 + b"}]}", "not valid JSON: a number has too many digits", id="huge-number"),
        pytest.param(b'{"features": [{"priority": NaN}]}', "not valid JSON: NaN is not a JSON value (JSON numbers cannot be NaN or Infinity)", id="nan"),
    ],
)
def test_a_file_that_is_not_a_spec_at_all_says_why(raw: bytes, expected: str) -> None:
    assert problems_of(raw) == [expected]


@pytest.mark.parametrize(
    ("feature_obj", "expected"),
    [
        ({"name": "A", "description": "d"}, "features[0].id: required field is missing"),
        ({"id": "a", "description": "d"}, "features[0].name: required field is missing"),
        ({"id": "a", "name": "A"}, "features[0].description: required field is missing"),
        (feature("a", name="   "), "features[0].name: must not be empty"),
        ({**feature("a"), "id": 7}, "features[0].id: must be a string, got the number 7"),
        (feature("a", acceptance="works"), 'features[0].acceptance: must be a list, got the string "works"'),
        (feature("a", acceptance=["ok", 3]), "features[0].acceptance[1]: must be a string, got the number 3"),
        (feature("a", max_attempts="3"), 'features[0].max_attempts: must be a whole number, got the string "3"'),
        (feature("a", max_attempts=2.5), "features[0].max_attempts: must be a whole number, got the number 2.5"),
        (feature("a", max_attempts=True), "features[0].max_attempts: must be a whole number, got true"),
        (feature("a", max_attempts=0), "features[0].max_attempts: must be at least 1, got the number 0"),
        (feature("a", max_attempts=1000), "features[0].max_attempts: must be at most 100, got the number 1000"),
        (feature("a", priority="high"), 'features[0].priority: must be a whole number, got the string "high"'),
        (feature("a", passes="yes"), 'features[0].passes: must be true or false, got the string "yes"'),
        (feature("a", depends_on="b"), 'features[0].depends_on: must be a list, got the string "b"'),
        (feature("a", verify=["pytest"]), "features[0].verify: must be a string, got a list"),
        (feature("a", verify=""), "features[0].verify: must not be empty"),
        (feature("a", verify="pytest\x00; rm -rf /"), "features[0].verify: contains a NUL byte (a shell command cannot)"),
        (feature("a", verify="x" * 10_001), "features[0].verify: is 10001 characters long; the limit is 10000 (put a long check in a script and call the script)"),
        (feature("a", protected=["tests/\x00"]), "features[0].protected[0]: contains a NUL byte (a file pattern cannot)"),
        (feature("a", description="\ud800"), "features[0].description: contains a lone surrogate escape such as \\ud800 (not valid Unicode)"),
    ],
)
def test_a_wrong_field_is_reported_at_its_location_in_plain_words(feature_obj: dict[str, Any], expected: str) -> None:
    assert problems_of(spec_bytes(feature_obj)) == [expected]


HINT = '(ids are used as file names: use only letters, digits, ".", "_" and "-")'


@pytest.mark.parametrize(
    ("fid", "expected"),
    [
        ("", "must not be empty"),
        (".", f'"." is not allowed {HINT}'),
        ("..", f'".." is not allowed {HINT}'),
        ("../../etc/passwd", f"contains a path separator {HINT}"),
        ("a\\b", f"contains a path separator {HINT}"),
        ("a\nb", f"contains a control character {HINT}"),
        ("a\x1b[31mb", f"contains a control character {HINT}"),
        ("two words", f'contains " " {HINT}'),
        ("café", f'contains "é" {HINT}'),
        ("a" * 101, "is 101 characters long; the limit is 100"),
    ],
)
def test_unsafe_ids_are_refused(fid: str, expected: str) -> None:
    assert problems_of(spec_bytes(feature(fid, name="A feature"))) == [f"features[0].id: {expected}"]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("x" * 300_000, "is 300000 characters long; the limit is 200 (a name is a commit's subject: put the detail "
                        "in the description)"),
        ("two\nlines", "contains a line break or another control character (a name is one line of a commit message)"),
        ("a\x1b[31mb", "contains a line break or another control character (a name is one line of a commit message)"),
    ],
)
def test_names_are_one_bounded_line_because_they_become_commit_subjects(name: str, expected: str) -> None:
    assert problems_of(spec_bytes(feature("auth", name=name))) == [f"features[0].name: {expected}"]


def test_a_name_of_200_characters_is_accepted() -> None:
    assert parse_spec(spec_bytes(feature("auth", name="n" * 200))).spec.features[0].name == "n" * 200


def test_duplicate_ids_name_both_places() -> None:
    assert problems_of(spec_bytes(feature("auth"), feature("x"), feature("auth"))) == [
        'features[2].id: duplicate id "auth" (also features[0].id; ids must be unique, rename one)'
    ]


def test_ids_differing_only_in_case_are_refused() -> None:
    assert problems_of(spec_bytes(feature("auth"), feature("Auth"))) == [
        'features[1].id: id "Auth" differs from features[0].id "auth" only in case'
        " (their log files would clash on case-insensitive file systems; rename one)"
    ]


def test_dependencies_must_exist_and_not_be_the_feature_itself() -> None:
    raw = spec_bytes(feature("login"), feature("logout", depends_on=["login", "sesion", "logout", "zzz"]), feature("session"))
    assert problems_of(raw) == [
        'features[1].depends_on[1]: unknown id "sesion" (did you mean "session"?)',
        'features[1].depends_on[2]: feature "logout" depends on itself (remove it)',
        'features[1].depends_on[3]: unknown id "zzz" (no feature has this id)',
    ]


def test_a_dependency_cycle_is_reported_with_its_path() -> None:
    raw = spec_bytes(
        feature("base"),
        feature("a", depends_on=["base", "c"]),
        feature("b", depends_on=["a"]),
        feature("c", depends_on=["b"]),
        feature("x", depends_on=["y"]),
        feature("y", depends_on=["x"]),
    )
    tail = "(a feature runs only after its dependencies pass; remove one of these dependencies)"
    assert problems_of(raw) == [
        f"features[1].depends_on: dependency cycle a -> c -> b -> a {tail}",
        f"features[4].depends_on: dependency cycle x -> y -> x {tail}",
    ]


def test_every_problem_is_listed_not_just_the_first() -> None:
    problems = problems_of((DATA / "broken.json").read_bytes())
    assert problems == [
        "verify: must be a string, got the number 42",
        "features[0].depends_on: dependency cycle auth -> sessions -> auth (a feature runs only after its dependencies pass; remove one of these dependencies)",
        'features[2].max_attempts: must be a whole number, got the string "3"',
        'features[2].id: duplicate id "auth" (also features[0].id; ids must be unique, rename one)',
        f"features[3].id: contains a path separator {HINT}",
        "features[3].name: required field is missing",
        'features[4].depends_on[0]: unknown id "sesions" (did you mean "sessions"?)',
    ]


def test_the_error_message_says_the_file_is_invalid_and_lists_each_problem() -> None:
    with pytest.raises(SpecError) as caught:
        load_spec(DATA / "broken.json")
    lines = str(caught.value).splitlines()
    assert lines[0] == f"{DATA / 'broken.json'} is not a valid feature spec (7 problems):"
    assert lines[1] == "  verify: must be a string, got the number 42"
    assert len(lines) == 8
    assert caught.value.warnings == ["features[3].colour: unknown key (ignored)"]


def test_a_single_problem_reads_in_the_singular() -> None:
    with pytest.raises(SpecError, match=r"^<spec> is not a valid feature spec \(1 problem\):\n  the file is empty"):
        parse_spec(b"")


def test_a_huge_number_of_problems_is_shortened_in_the_message() -> None:
    with pytest.raises(SpecError) as caught:
        parse_spec(json.dumps({"features": [{} for _ in range(100)]}).encode())
    assert len(caught.value.problems) == 300
    assert str(caught.value).splitlines()[-1] == "  ... and 100 more"


def test_control_characters_in_spec_text_are_escaped_in_messages() -> None:
    raw = spec_bytes(feature("a", depends_on=["b\x1b[2J"]))
    with pytest.raises(SpecError) as raised:
        parse_spec(raw)
    text = str(raised.value)
    assert "\x1b" not in text


# --- warnings --------------------------------------------------------------------------


def test_unknown_keys_are_warnings_with_a_suggestion() -> None:
    raw = spec_bytes(feature("a", colour="red", steps=["x"], depend_on=["b"]), feature("b"), projct="x", verify="true")
    assert parse_spec(raw).warnings == [
        'projct: unknown key (ignored; did you mean "project"?)',
        "features[0].colour: unknown key (ignored)",
        'features[0].steps: unknown key (ignored; did you mean "acceptance"?)',
        'features[0].depend_on: unknown key (ignored; did you mean "depends_on"?)',
    ]


def test_an_odd_unknown_key_is_shown_quoted() -> None:
    raw = spec_bytes(feature("a", **{"bad key\n": 1}), verify="true")
    assert parse_spec(raw).warnings == ['features[0]["bad key\\n"]: unknown key (ignored)']


def test_a_key_given_twice_is_a_warning() -> None:
    raw = b'{"verify": "true", "features": [{"id": "a", "name": "A", "name": "B", "description": "d"}]}'
    loaded = parse_spec(raw)
    assert loaded.spec.features[0].name == "B"
    assert loaded.warnings == ["features[0].name: key given more than once (the last one is used)"]


def test_features_without_any_check_are_pointed_out_once() -> None:
    assert parse_spec(spec_bytes(feature("a"), feature("b", verify="true"))).warnings == [
        "no verify command for 1 of 2 features (none of their own, none at the top level):"
        " the agent's own report will decide whether they pass; give each a `verify` command, or a top-level one"
    ]


def test_a_quickstart_list_without_checks_points_to_plan_from() -> None:
    raw = b'[{"category": "functional", "description": "User can log in", "steps": ["open"], "passes": false}]'
    (warning,) = parse_spec(raw, source="feature_list.json").warnings
    assert "the agent's own report will decide" in warning
    assert "`orchestrate plan --from feature_list.json` keeps these features and writes a check for each" in warning


def test_warnings_are_capped() -> None:
    raw = spec_bytes(feature("a", **{f"k{i}": i for i in range(500)}), verify="true")
    warnings = parse_spec(raw).warnings
    assert len(warnings) == 101 and warnings[-1] == "... and 400 more warnings"


# --- hostile input and the file system -------------------------------------------------


def test_a_file_over_the_size_limit_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    with open(path, "wb") as handle:
        handle.truncate(MAX_SPEC_BYTES * 3)
    with pytest.raises(SpecError) as caught:
        load_spec(path)
    assert caught.value.problems == [
        "the file is larger than the limit of 10 MB (a feature spec is normally a few kilobytes; is this the right file?)"
    ]


def test_too_many_features_are_refused() -> None:
    raw = b'{"features": [' + b",".join([b"{}"] * (MAX_FEATURES + 1)) + b"]}"
    assert problems_of(raw) == [f"features: {MAX_FEATURES + 1} features; the limit is {MAX_FEATURES} (split the spec)"]


def test_a_long_dependency_chain_does_not_overflow_the_stack() -> None:
    chain = [feature(f"f{i}", depends_on=[f"f{(i + 1) % 5000}"]) for i in range(5000)]
    (problem,) = problems_of(spec_bytes(*chain))
    assert problem.startswith("features[0].depends_on: dependency cycle f0 -> f1 -> f2 -> f3 -> f4 -> ... -> f4996 -> f4997 -> f4998 -> f4999 -> f0 (")
    assert problem.endswith("; 5000 features take part)")


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("missing.json", "no such file"),
        (".", "this is a directory; give the path of a spec file"),
        ("nul\x00.json", "cannot read the file: embedded null byte"),
    ],
)
def test_an_unreadable_path_is_a_spec_error(tmp_path: Path, name: str, expected: str) -> None:
    with pytest.raises(SpecError) as caught:
        load_spec(tmp_path / name)
    assert caught.value.problems == [expected]


def test_a_missing_spec_file_is_said_not_to_exist_not_to_be_invalid(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as caught:
        load_spec(tmp_path / "spec.json")
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'spec.json'}: the spec file does not exist")
    assert "not a valid feature spec" not in message and "No such file or directory" not in message


def test_an_undecodable_file_name_does_not_become_the_project_name(tmp_path: Path) -> None:
    path = Path(bytes(tmp_path).decode() + "/\udcff.json")  # a name that is not UTF-8
    try:
        path.write_bytes(spec_bytes(feature("a")))
    except (OSError, UnicodeEncodeError):
        pytest.skip("file system refuses the name")
    assert load_spec(path).spec.project == "project"
