"""What the agent sees and can say (issue 42), through the CLI against the scripted fake.

A defective check is reported, stops the feature and waits for a person; a retry is told what
the previous attempt left; a turn ended without a report is reminded once; the check's output
and the regression guard's findings are written for a model to act on.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from fake_messages_api.scripted_agent.agent_turn import AgentTurn
from fake_messages_api.scripted_agent.plans import bash, edit_create, report, text, tool_use
from tests.cli_helpers import first_prompt, plain_summarizer, read_json, run_cli, write_spec
from tests.git_helpers import init_repo

WRONG_CHECK = 'test "$(cat total.txt)" = 7 || { echo "expected 7 in total.txt"; exit 1; }\n'  # 1 + 2 + 3 is 6
RIGHT_CHECK = 'test "$(cat total.txt)" = 6 || { echo "expected 6 in total.txt"; exit 1; }\n'
DEFECT = {"file": "check_total.sh", "line": 1, "evidence": "expects 7 for 1 + 2 + 3, whose sum is 6"}


def _sum_plan(turn: AgentTurn) -> list[dict]:
    """Writes the right total; reports the check as defective when the check fails it."""
    steps = [
        [edit_create("total.txt", "6\n")],
        [tool_use("report_feature", {"summary": "total.txt holds 6", "defective_check": DEFECT})],
        [text("done")],
    ]
    return steps[min(turn.step, 2)]


def _defect_project(project: Path) -> Path:
    (project / "check_total.sh").write_text(WRONG_CHECK)
    return write_spec(project, 3, extra={
        "feat-01": {"verify": "sh check_total.sh", "max_attempts": 3,
                    "acceptance": ["total.txt holds the sum of 1, 2 and 3"]},
        "feat-02": {"depends_on": ["feat-01"]},
    })


def test_a_check_reported_defective_needs_review_then_a_fixed_check_is_retried(fake_api, project):
    fake_api.plans["feat-01"] = _sum_plan
    spec = _defect_project(project)

    result = run_cli(["run", str(spec), "--report", str(project.parent / "r.json")], project, fake_api)

    assert result.code == 4, result.stderr
    totals = read_json(project.parent / "r.json")["totals"]
    assert totals["needs_review"] == 1 and totals["blocked"] == 1 and totals["failed"] == 0
    state = read_json(project / ".autonomous/state/execution-state.json")["features"]
    assert state["feat-01"]["status"] == "needs_review"
    assert state["feat-01"]["attempts"] == 1  # no retry spent on a check the agent disputes
    assert len([r for r in fake_api.agent_requests("feat-01") if len(r.body["messages"]) == 1]) == 1
    assert state["feat-02"]["status"] == "blocked" and "feat-01 needs review" in state["feat-02"]["reason"]
    assert state["feat-03"]["status"] == "passed"
    assert "check_total.sh:1" in result.stderr and "whose sum is 6" in result.stderr
    assert "orchestrate run" in result.stderr

    status = run_cli(["status"], project)
    assert status.code == 0 and "needs_review" in status.stdout and "whose sum is 6" in status.stdout

    (project / "check_total.sh").write_text(RIGHT_CHECK)  # the person fixes the check
    again = run_cli(["run", str(spec)], project, fake_api)

    assert again.code == 0, again.stderr
    state = read_json(project / ".autonomous/state/execution-state.json")["features"]
    assert [state[f"feat-0{i}"]["status"] for i in (1, 2, 3)] == ["passed"] * 3


def test_the_report_tool_offers_the_defective_check_field(fake_api, project):
    spec = write_spec(project, 1)

    assert run_cli(["run", str(spec)], project, fake_api).code == 0

    tools = fake_api.agent_requests("feat-01")[0].body["tools"]
    schema = next(t for t in tools if t["name"] == "report_feature")["input_schema"]
    defect = schema["properties"]["defective_check"]
    assert set(defect["required"]) == {"file", "evidence"} and "line" in defect["properties"]


def test_a_defect_claimed_while_the_check_passes_changes_nothing(fake_api, project):
    fake_api.plans["feat-01"] = _sum_plan
    (project / "check_total.sh").write_text(RIGHT_CHECK)
    spec = write_spec(project, 1, verify="sh check_total.sh")

    result = run_cli(["run", str(spec)], project, fake_api)

    assert result.code == 0, result.stderr
    assert read_json(project / ".autonomous/state/execution-state.json")["features"]["feat-01"]["status"] == "passed"


def test_a_retry_is_told_what_the_previous_attempt_left_and_reported(fake_api, tmp_path):
    project = init_repo(tmp_path / "project", {"check_value.sh": 'test "$(cat value.txt)" = 42\n', "lib.py": "A = 1\n"})

    def plan(turn: AgentTurn) -> list[dict]:
        value = "42" if turn.is_retry else "7"
        steps = [[edit_create("value.txt", value + "\n"), bash("echo 'B = 2' >> lib.py")],
                 [report(f"wrote {value} to value.txt", notes="unsure whether 7 is the value")], [text("done")]]
        return steps[min(turn.step, 2)]

    fake_api.plans["feat-01"] = plan
    spec = write_spec(tmp_path, 1, verify="sh check_value.sh")

    assert run_cli(["run", str(spec)], project, fake_api).code == 0
    retry = first_prompt(fake_api, "feat-01", 1)
    section = retry.split("## Feature", 1)[0]  # all of it inside `## Last Verification Result`
    assert "changed since the last checkpoint:\n- lib.py (+1 -0)\n- value.txt (new)" in section
    assert "The last report's summary: wrote 7 to value.txt" in section
    assert "Its notes: unsure whether 7 is the value" in section


LONG_DECISION = (
    'parse() error messages are exactly "expected \')\' at column N", "unexpected end of input at column N" and '
    '"unknown token \'X\' at column N", with N counted from 1; the CLI prints them unchanged after "error: ", '
    "and tests compare them as whole strings."
)


def test_memory_items_are_shown_whole_in_the_next_prompt(fake_api, project):
    fake_api.plans["feat-01"] = [[edit_create("features/feat-01.txt", "ok\n")],
                                 [report("parser done", decisions=[LONG_DECISION], constraints=[LONG_DECISION[:150]])]]
    spec = write_spec(project, 2, extra={"feat-02": {"depends_on": ["feat-01"]}})

    assert run_cli(["run", str(spec)], project, fake_api).code == 0

    prompt = first_prompt(fake_api, "feat-02")
    assert f"- {LONG_DECISION} (Feature feat-01)" in prompt
    (summarizer,) = [r for r in fake_api.requests if r.kind == "summarizer"]
    assert "retiredFailureIds" in json.dumps(summarizer.body) and "{default:" not in json.dumps(summarizer.body)


def test_a_huge_output_is_cut_once_and_its_note_gives_the_real_count(fake_api, project):
    seen: list[str] = []

    def plan(turn: AgentTurn) -> list[dict]:
        if turn.step == 1:
            seen.extend(result.content for result in turn.tool_results)
        steps = [[bash("python3 -c \"print('x' * 200000)\"")], [edit_create("features/feat-01.txt", "ok\n")],
                 [report("done")], [text("done")]]
        return steps[min(turn.step, 3)]

    fake_api.plans["feat-01"] = plan
    spec = write_spec(project, 1)

    assert run_cli(["run", str(spec)], project, fake_api).code == 0

    (output,) = seen
    notes = re.findall(r"\[\.\.\. (\d+) characters elided; narrow the command", output)
    assert len(notes) == 1 and 165_000 < int(notes[0]) < 175_000, output[14_000:16_000]
    assert len(output) <= 30_000 and output.count("x") + int(notes[0]) == 200_000


def test_a_turn_ended_without_a_report_gets_one_reminder_then_its_text_is_the_summary(fake_api, project):
    fake_api.plans["feat-01"] = [[edit_create("features/feat-01.txt", "ok\n")],
                                 [text("Wrote features/feat-01.txt; the marker is in place.")],
                                 [text("All done: features/feat-01.txt holds the marker.")]]
    spec = write_spec(project, 1)

    assert run_cli(["run", str(spec)], project, fake_api).code == 0

    requests = fake_api.agent_requests("feat-01")
    assert len(requests) == 3  # the work, the text that ended the turn, the answer to the one reminder
    reminder = requests[2].body["messages"][-1]
    assert reminder["role"] == "user" and "without calling `report_feature`" in json.dumps(reminder)
    log = read_json(project / ".autonomous/logs/feat-01.json")
    assert log["report"]["summary"] == "All done: features/feat-01.txt holds the marker."


PYTEST_LIKE_CHECK = """if [ "$(cat total.txt 2>/dev/null)" != 6 ]; then
  echo '=================================== FAILURES ==================================='
  echo 'E       AssertionError: assert 7 == 6'
  echo '=========================== short test summary info ============================'
  echo 'FAILED tests/test_total.py::test_sum - AssertionError: assert 7 == 6'
  echo '1 failed in 0.01s'
  exit 1
fi
"""


def _retiring_summarizer(request: dict) -> dict:
    answer = plain_summarizer(request)
    return {**answer, "retiredFailureIds": ["F1"]}


def test_failures_to_avoid_name_the_test_and_the_reported_prevention_and_show_once_resolved_only_where_files_meet(fake_api, project):
    (project / "check_total.sh").write_text(PYTEST_LIKE_CHECK)

    def plan(turn: AgentTurn) -> list[dict]:
        value = "6" if turn.is_retry else "7"
        steps = [[edit_create("total.txt", value + "\n")],
                 [report(f"total.txt holds {value}", prevention="Sum with sum(values); a manual loop added 1")],
                 [text("done")]]
        return steps[min(turn.step, 2)]

    fake_api.plans["feat-01"] = plan
    fake_api.summarizer = _retiring_summarizer
    shares_a_file = ["features/feat-03.txt exists", "it reads total.txt"]  # no dependency on feat-01
    spec = write_spec(project, 4, extra={"feat-01": {"verify": "sh check_total.sh"},
                                         "feat-02": {"depends_on": ["feat-01"]},
                                         "feat-03": {"acceptance": shares_a_file}})

    assert run_cli(["run", str(spec)], project, fake_api).code == 0

    assert "Recent Failures to Avoid" not in first_prompt(fake_api, "feat-01", 1)  # its retry shows it once
    shown = ("- tests/test_total.py::test_sum failed: AssertionError: assert 7 == 6: "
             "Sum with sum(values); a manual loop added 1")
    assert shown in first_prompt(fake_api, "feat-02")  # it builds on feat-01's files
    assert shown in first_prompt(fake_api, "feat-03")  # it names total.txt, which the failing attempt changed
    assert "Recent Failures to Avoid" not in first_prompt(fake_api, "feat-04")  # passed since, nothing shared
    assert read_json(project / ".autonomous/context/failure-memory.json")["failures"] == []  # the summarizer retired it


def test_the_regression_line_says_a_shared_check_prefix_once(fake_api, tmp_path):
    project = init_repo(tmp_path / "project")
    prefix = "PYTHONDONTWRITEBYTECODE=1 PYTHONHASHSEED=0 python3 -B -c 'import sys' && test -f"
    extra = {f"feat-0{i}": {"verify": f"{prefix} features/feat-0{i}.txt", "acceptance": ["features/shared.txt"]}
             for i in (1, 2, 3)}
    for fid in ("feat-01", "feat-02", "feat-03"):
        fake_api.plans[fid] = [[edit_create(f"features/{fid}.txt", "ok\n"), edit_create("features/shared.txt", fid)],
                               [report("done")]]
    spec = write_spec(tmp_path, 3, extra=extra)

    assert run_cli(["run", str(spec)], project, fake_api).code == 0

    line = next(x for x in first_prompt(fake_api, "feat-03").splitlines() if x.startswith("Regression checks:"))
    assert line.count("PYTHONHASHSEED") == 1, line
    assert "feat-01 (`features/feat-01.txt`)" in line and "feat-02 (`features/feat-02.txt`)" in line


def test_the_prompt_maps_the_files_and_states_the_environment(fake_api, project):
    (project / "tests" / "features").mkdir(parents=True)
    (project / "tests" / "features" / "test_parse.py").write_text("def test_parse():\n    pass\n")
    spec = write_spec(project, 1)

    assert run_cli(["run", str(spec)], project, fake_api).code == 0

    prompt = first_prompt(fake_api, "feat-01")
    workspace = prompt.split("## Workspace\n\n", 1)[1].split("\n## ", 1)[0]
    assert "tests/features/test_parse.py (27 bytes)" in workspace and "spec.json" in workspace
    environment = next(line for line in workspace.splitlines() if line.startswith("Environment: "))
    assert "network" in environment and "python3 is /" in environment and "pytest" in environment
    assert prompt.index("## Feature") < prompt.index("## Workspace")


def test_dry_run_shows_the_workspace_and_a_retry_s_note_as_the_run_would(fake_api, project):
    (project / "check_total.sh").write_text(PYTEST_LIKE_CHECK)
    fake_api.plans["feat-01"] = [[edit_create("total.txt", "7\n")], [report("total.txt holds 7", notes="summed by hand")],
                                 [text("done")]]
    spec = write_spec(project, 2, extra={"feat-01": {"verify": "sh check_total.sh", "max_attempts": 1},
                                         "feat-02": {"depends_on": ["feat-01"]}})
    assert run_cli(["run", str(spec)], project, fake_api).code != 0  # feat-01 failed its one attempt, feat-02 blocked

    result = run_cli(["run", str(spec), "--dry-run"], project, None, key=None)

    assert result.code == 0, result.stderr
    retry = result.stdout.split("===== feat-01 =====", 1)[1].split("===== feat-02 =====", 1)[0]
    assert "The last report's summary: total.txt holds 7" in retry and "Its notes: summed by hand" in retry
    assert result.stdout.count("## Workspace") == 2  # feat-01's retry and feat-02's first attempt
    assert "check_total.sh" in retry.split("## Workspace", 1)[1]  # the file map
