"""The parts of `orchestrate plan`: the red-check verdicts, merging chunks, confining check files,
the answer schemas, the spec's `red` field, and `validate --run-checks`."""

from __future__ import annotations

import json

import pytest

from orchestrator.plan.chunks import dependency_order, merge_features, split_description
from orchestrator.plan.red import judge
from orchestrator.plan.result import planned_spec_json
from orchestrator.plan.runners import detect_runner
from orchestrator.plan.schema import PLANNED_FEATURE_FIELDS, spec_tool
from orchestrator.plan.written_checks import WrittenCheckFiles
from orchestrator.spec.feature_spec import Feature
from orchestrator.spec.load import parse_spec
from shared_base.check_result import CheckResult


def result(code: int | None, output: str = "", command: str = "python -m pytest -q t.py") -> CheckResult:
    return CheckResult(command=command, success=code == 0, exit_code=code, output=output, attempt=0)


@pytest.mark.parametrize("code, output, verdict", [
    (0, "1 passed", "vacuous"),
    (1, "E   assert 3 == 5\n1 failed", "red"),
    (2, "E   ModuleNotFoundError: No module named 'calc'\n1 error during collection", "red"),
    (1, "E   AttributeError: module 'calc' has no attribute 'sub'", "red"),
    (2, "E     SyntaxError: invalid syntax", "broken"),
    (1, "E       fixture 'client' not found", "broken"),
    (2, "E   ModuleNotFoundError: No module named 'tests.helpers'", "broken"),
    (2, "E   ModuleNotFoundError: No module named 'conftest'", "broken"),
    (4, "ERROR: file or directory not found: tests/x.py", "broken"),
    (5, "no tests ran in 0.01s", "broken"),
    (127, "sh: 1: pytset: not found", "broken"),
    (None, "", "broken"),  # timed out
    (-9, "", "broken"),  # killed
])
def test_a_check_is_red_only_when_it_fails_for_the_right_reason(code, output, verdict):
    assert judge(result(code, output))[0] == verdict


def test_duplicates_across_chunks_are_dropped_and_references_follow_the_one_kept():
    kept = [{"id": "auth", "name": "User login", "depends_on": []}]
    new = [
        {"id": "login", "name": "User  Login!", "depends_on": []},
        {"id": "profile", "name": "Profile page", "depends_on": ["login"]},
        {"id": "auth", "name": "Another auth", "depends_on": []},
    ]
    merged, dropped = merge_features(kept, new)
    assert [f["id"] for f in merged] == ["auth", "profile"]
    assert merged[1]["depends_on"] == ["auth"]
    assert dropped == ["login (a duplicate of auth)", "auth (a duplicate of auth)"]


def test_features_are_put_after_their_dependencies_keeping_the_planners_order_otherwise():
    features = [{"id": "b", "depends_on": ["a"]}, {"id": "c", "depends_on": []}, {"id": "a", "depends_on": []}]
    assert [f["id"] for f in dependency_order(features)] == ["c", "a", "b"]


def test_a_long_description_is_split_at_headings_within_the_limit():
    text = "".join(f"# Part {i}\n\n" + "word " * 200 + "\n\n" for i in range(6))
    chunks = split_description(text, 2500)
    assert len(chunks) > 1 and all(len(c) <= 2500 for c in chunks)
    assert "".join(chunks) == text and all(c.startswith("# Part") for c in chunks)
    assert split_description("short", 100) == ["short"]


def test_check_files_stay_inside_the_project_and_never_replace_its_files(tmp_path):
    (tmp_path / "app.py").write_text("x = 1\n")
    (tmp_path / "out").symlink_to("/tmp")
    files = WrittenCheckFiles(tmp_path)
    for bad in ("/etc/passwd", "../x.py", ".autonomous/x.py", ".git/hooks/pre-commit", "app.py", "out/x.py"):
        assert files.problems("f1", [bad]), bad
    files.replace("f1", {"tests/features/test_f1.py": "def test(): pass\n"})
    assert files.problems("f1", ["tests/features/test_f1.py"]) == []  # its own, rewritten
    assert files.problems("f2", ["tests/features/test_f1.py"])  # another feature's
    files.replace("f1", {"tests/features/test_f1b.py": "x = 1\n"})
    assert not (tmp_path / "tests/features/test_f1.py").exists()
    files.rollback()
    assert not (tmp_path / "tests/features/test_f1b.py").exists() and (tmp_path / "app.py").exists()


def test_the_planner_schema_is_the_spec_models_own():
    feature = spec_tool()["input_schema"]["properties"]["features"]["items"]
    assert tuple(feature["properties"]) == PLANNED_FEATURE_FIELDS
    for name in PLANNED_FEATURE_FIELDS:
        assert feature["properties"][name]["description"] == Feature.model_fields[name].description


def test_old_specs_stay_valid_and_red_round_trips_without_changing_the_feature_hash():
    old = {"features": [{"id": "a", "name": "A", "description": "d", "verify": "true"}]}
    before = parse_spec(json.dumps(old).encode()).spec
    assert before.features[0].red is None
    old["features"][0]["red"] = True
    after = parse_spec(json.dumps(old).encode()).spec
    assert after.features[0].red is True and after.features[0].text_hash() == before.features[0].text_hash()
    written = json.loads(planned_spec_json(after))
    assert written["features"][0] == {**old["features"][0], "category": "uncategorized", "acceptance": [], "depends_on": []}


def test_the_runner_comes_from_the_project_or_the_description(tmp_path):
    assert detect_runner(tmp_path, "a web page") is None
    assert detect_runner(tmp_path, "tested with Jest") == "jest"
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    assert detect_runner(tmp_path, "a web page") == "pytest"


def test_a_demo_can_script_the_planner_from_a_file(tmp_path):
    from fake_messages_api.scripted_agent.forced_tools import load_tool_answers

    path = tmp_path / "answers.json"
    path.write_text(json.dumps({"submit_spec": [{"project": "p", "description": "d", "features": []}]}))
    answers = load_tool_answers(path)
    assert answers("submit_spec", {})["project"] == "p"
    assert answers("submit_spec", {"tools": []}) == {}  # past the script: the smallest valid answer


def test_a_flagged_checks_reason_is_never_put_in_nested_parentheses(tmp_path, capsys):
    from orchestrator.commands.plan_output import print_result
    from orchestrator.llm.costs.spend import Spend
    from orchestrator.plan.check_writer import FeatureCheck
    from orchestrator.plan.planner import PlannedSpec

    spec = parse_spec(json.dumps({"features": [{"id": "a", "name": "A", "description": "d", "verify": "true"}]}).encode()).spec
    reason = "pytest could not run the tests (usage error or nothing collected)"
    check = FeatureCheck("a", files=["tests/test_a.py"], verdict="broken", reason=reason)

    print_result(tmp_path / "spec.json", spec, PlannedSpec(spec), [check], Spend(), json_mode=False)

    out, err = capsys.readouterr()
    assert f"a: check flagged as broken: {reason}; review it before running" in err
    for line in (out + err).splitlines():
        assert "((" not in line.replace(" ", "") and "))" not in line, line
        depth = 0
        for char in line:
            depth += {"(": 1, ")": -1}.get(char, 0)
            assert depth <= 1, f"nested parentheses: {line}"
