"""The Impact Agent through the real CLI: footprints predicted before features start, the prompt's
line naming the later features that build on a shared file, the hit rate, `orchestrate context`,
the `--jobs` scheduler's waits, and a conflict the prediction missed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from context_agent.budget import INJECTION_BUDGET
from context_agent.injection.render import HEADING
from fake_messages_api.scripted_agent.plans import bash, report
from shared_base.tokens import estimate_tokens
from tests.cli_helpers import run_cli, write_spec

LATER = "Later features build on the files you change"


def _appending(fake_api: Any, *ids: str) -> None:
    for fid in ids:
        fake_api.plans[fid] = [[bash(f"echo 'line {fid}' >> shared.txt")], [report(f"appended line {fid}")]]


def _shared_spec(tmp_path: Path, count: int, shared: list[str], *, named: bool = True) -> Path:
    """`count` features; those in `shared` append a line to shared.txt (their descriptions say so
    when `named`). Their checks spell the file's name at run time: a file a check names is protected."""
    extra = {
        fid: {"verify": f"grep -qx 'line {fid}' \"$(echo share)d.txt\"", "max_attempts": 4,
              **({"description": f"Append the line 'line {fid}' to shared.txt.",
                  "acceptance": [f"shared.txt holds 'line {fid}'"]} if named else {})}
        for fid in shared
    }
    return write_spec(tmp_path, count, extra=extra)


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


def _state(root: Path) -> dict[str, Any]:
    features: dict[str, Any] = json.loads((root / ".autonomous/state/execution-state.json").read_text())["features"]
    return features


def _first_prompt(fake_api: Any, fid: str) -> str:
    return json.dumps(fake_api.agent_requests(fid)[0].body["messages"][0]["content"])


def test_the_first_feature_on_a_shared_file_is_told_which_later_ones_change_it_and_the_hit_rate_is_kept(
    tmp_path: Path, fake_api: Any,
) -> None:
    root = _project(tmp_path)
    spec = _shared_spec(tmp_path, 3, ["feat-01", "feat-03"])
    _appending(fake_api, "feat-01", "feat-03")
    result = run_cli(["run", str(spec), "--json"], root, fake_api)
    assert result.code == 0, result.stderr
    first = _first_prompt(fake_api, "feat-01")
    assert f"{LATER}: feat-03 (shared.txt, needs line feat-03)" in first
    assert LATER not in _first_prompt(fake_api, "feat-02") and LATER not in _first_prompt(fake_api, "feat-03")
    features = _state(root)
    for fid, entry in features.items():  # every feature's prediction compared with what it changed
        prediction = entry["prediction"]
        assert prediction["changed"] >= 1 and prediction["hits"] == prediction["changed"], (fid, prediction)
    assert features["feat-01"]["prediction"]["writes"] == ["shared.txt"]
    shown = run_cli(["context", "feat-03", "--spec", str(spec)], root, None)
    assert shown.code == 0, shown.stderr
    assert "=== impact: feature feat-03 (prediction kept in the state) ===" in shown.stdout
    assert "compared once it passed: 1/1 changed file(s) foreseen" in shown.stdout
    assert "footprint predictions: 3/3 changed file(s) foreseen (100%)" in shown.stdout
    status = run_cli(["status"], root, None)
    assert status.code == 0, status.stderr
    assert status.stdout.splitlines()[-1] == "footprint predictions: 3/3 changed file(s) foreseen (100%)"


def test_status_says_the_hit_rate_only_when_the_run_made_predictions(tmp_path: Path, fake_api: Any) -> None:
    root = _project(tmp_path)
    spec = _shared_spec(tmp_path, 2, ["feat-01"])
    _appending(fake_api, "feat-01")
    assert run_cli(["run", str(spec), "--json"], root, fake_api).code == 0
    state_file = root / ".autonomous/state/execution-state.json"
    state = json.loads(state_file.read_text())
    state["features"]["feat-02"]["prediction"] = {"writes": ["other.txt"], "changed": 2, "hits": 0}
    state_file.write_text(json.dumps(state))
    status = run_cli(["status"], root, None)
    assert status.code == 0, status.stderr
    assert status.stdout.splitlines()[-1] == "footprint predictions: 1/3 changed file(s) foreseen (33%)"
    for entry in state["features"].values():  # a state from before the Impact Agent: no line
        entry.pop("prediction")
    state_file.write_text(json.dumps(state))
    status = run_cli(["status"], root, None)
    assert status.code == 0, status.stderr
    assert "footprint predictions" not in status.stdout and status.stdout.splitlines()[-1].startswith("2 passed")


def _full_memory(root: Path) -> None:
    """Project memory that fills the whole context budget: a long summary and many constraints."""
    context = root / ".autonomous/context"
    context.mkdir(parents=True)
    summary = "\n".join(f"Step {n}: the store module keeps records {n} in a sorted list." for n in range(200))
    (context / "running-summary.json").write_text(json.dumps({"summary": summary, "source": "model"}))
    constraints = [{"id": f"c{n}", "description": f"Rule {n}: keep the public API of module {n} unchanged.",
                    "seq": n} for n in range(60)]
    (context / "active-constraints.json").write_text(json.dumps({"nextSeq": 61, "constraints": constraints}))


def _message_text(request: Any) -> str:
    content = request.body["messages"][0]["content"]
    return content if isinstance(content, str) else "".join(block.get("text", "") for block in content)


def test_the_forward_looking_line_counts_against_the_context_budget(tmp_path: Path, fake_api: Any) -> None:
    root = _project(tmp_path)
    _full_memory(root)
    spec = _shared_spec(tmp_path, 3, ["feat-01", "feat-03"])
    _appending(fake_api, "feat-01", "feat-03")
    result = run_cli(["run", str(spec), "--json"], root, fake_api)
    assert result.code == 0, result.stderr
    first = _message_text(fake_api.agent_requests("feat-01")[0])
    [line] = [text for text in first.splitlines() if text.startswith(LATER)]
    section = first[first.index(HEADING):]
    assert estimate_tokens(section) > INJECTION_BUDGET - 200  # the memory alone would fill the budget
    assert estimate_tokens(section) + estimate_tokens(line) <= INJECTION_BUDGET
    later = _message_text(fake_api.agent_requests("feat-02")[0])  # no line: the whole budget is the memory's
    assert LATER not in later and estimate_tokens(later[later.index(HEADING):]) > estimate_tokens(section)


def test_context_shows_the_prediction_before_any_run(tmp_path: Path) -> None:
    root = _project(tmp_path)
    spec = _shared_spec(tmp_path, 3, ["feat-01", "feat-03"])
    shown = run_cli(["context", "feat-01", "--spec", str(spec)], root, None, key=None)
    assert shown.code == 0, shown.stderr
    assert "=== impact: feature feat-01 (prediction as it would be predicted now) ===" in shown.stdout
    assert "will change: shared.txt" in shown.stdout
    assert f"in its prompt: {LATER}: feat-03 (shared.txt" in shown.stdout
    assert "footprint predictions: none compared yet" in shown.stdout


def test_jobs_hold_a_feature_back_while_another_changes_its_file_and_say_so(tmp_path: Path, fake_api: Any) -> None:
    root = _project(tmp_path)
    spec = _shared_spec(tmp_path, 4, ["feat-01", "feat-02"])
    _appending(fake_api, "feat-01", "feat-02")
    result = run_cli(["run", str(spec), "--jobs", "3", "--json"], root, fake_api)
    assert result.code == 0, result.stderr
    events = result.events()
    waits = [e for e in events if e["type"] == "feature_waiting"]
    assert waits and waits[0] | {"ts": 0} == {"type": "feature_waiting", "ts": 0, "id": "feat-02", "waitsFor": "feat-01",
                                            "files": ["shared.txt"]}
    started = [e["id"] for e in events if e["type"] == "feature_started"]
    assert started.index("feat-03") < started.index("feat-02")  # the independent one took the slot
    assert set(_state(root)) == {f"feat-{i:02d}" for i in range(1, 5)}
    assert all(entry["status"] == "passed" for entry in _state(root).values())


def test_a_conflict_the_prediction_did_not_foresee_is_recorded_and_said(tmp_path: Path, fake_api: Any) -> None:
    root = _project(tmp_path)
    spec = _shared_spec(tmp_path, 2, ["feat-01", "feat-02"], named=False)  # nothing says they share a file
    _appending(fake_api, "feat-01", "feat-02")
    result = run_cli(["run", str(spec), "--jobs", "2", "--json"], root, fake_api)
    assert result.code == 0, result.stderr
    features = _state(root)
    conflicted = [fid for fid, entry in features.items() if entry["prediction"].get("conflicts")]
    assert len(conflicted) == 1, features  # the second to land met the first's line
    [loser] = conflicted
    [winner] = {"feat-01", "feat-02"} - {loser}
    conflicts = features[loser]["prediction"]["conflicts"]
    assert conflicts == [{"files": ["shared.txt"], "withFeatures": [winner], "foreseen": False}]
    warnings = [e["message"] for e in result.events() if e["type"] == "warning"]
    assert f"{loser}: merge conflict in shared.txt with {winner}: the footprint prediction missed it" in warnings


def test_the_impact_model_names_files_the_text_does_not_and_its_call_is_booked(tmp_path: Path, fake_api: Any) -> None:
    from fake_messages_api.scripted_agent.forced_tools import ScriptedToolAnswers

    root = _project(tmp_path)
    spec = _shared_spec(tmp_path, 3, ["feat-01", "feat-02"], named=False)  # only the model knows
    _appending(fake_api, "feat-01", "feat-02")
    answer = {"features": [{"id": "feat-01", "files": ["shared.txt", "../../etc/passwd", "/etc/hosts"]},
                           {"id": "feat-02", "files": ["./shared.txt"]}, {"id": "nope", "files": ["x.py"]}]}
    fake_api.tool_answers = ScriptedToolAnswers({"predict_footprints": [answer]})
    result = run_cli(["run", str(spec), "--jobs", "2", "--json", "--impact-model", "claude-haiku-4-5"], root, fake_api)
    assert result.code == 0, result.stderr
    asked = [r for r in fake_api.forced_tool_calls if r.body["tool_choice"]["name"] == "predict_footprints"]
    assert len(asked) == 1 and asked[0].body["model"] == "claude-haiku-4-5"
    features = _state(root)
    assert features["feat-01"]["prediction"]["byModel"] == ["shared.txt"]  # paths outside the project dropped
    assert features["feat-02"]["prediction"]["byModel"] == ["shared.txt"]
    waits = [(e["id"], e["waitsFor"]) for e in result.events() if e["type"] == "feature_waiting"]
    assert waits == [("feat-02", "feat-01")]
    state = json.loads((root / ".autonomous/state/execution-state.json").read_text())
    assert state["totals"]["apiCalls"] == fake_api.calls  # every call booked, the impact model's too


def test_the_impact_model_is_off_by_default_and_held_to_the_cost_cap(tmp_path: Path, fake_api: Any) -> None:
    root = _project(tmp_path)
    spec = _shared_spec(tmp_path, 1, [], named=False)
    result = run_cli(["run", str(spec), "--json", "--impact-model", "claude-haiku-4-5", "--max-cost", "0.000001"],
                     root, fake_api)
    assert result.code == 3, result.stderr  # stopped by the cap before the call was sent
    assert fake_api.calls == 0
    assert "cost cap" in result.stderr
    assert run_cli(["run", str(spec), "--json", "--max-cost", "5"], root, fake_api).code == 0
    assert not [r for r in fake_api.forced_tool_calls if r.body["tool_choice"]["name"] == "predict_footprints"]
