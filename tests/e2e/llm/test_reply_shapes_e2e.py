"""What the real API can send back, met through the CLI: every stop reason and block shape the
fake can play, each handled in a way the user sees (exit code, console line, event, log)."""

from __future__ import annotations

import json
from pathlib import Path

from fake_messages_api.faults import Fault
from fake_messages_api.scripted_agent.plans import cut_tool_use, edit_create, report, stop_reason, text, tool_use
from tests.cli_helpers import read_events, read_json, run_cli, write_spec

EDITOR = "str_replace_based_edit_tool"


def _log(project: Path, feature_id: str = "feat-01") -> dict:
    return read_json(project / ".autonomous" / "logs" / f"{feature_id}.json")


def _warnings(project: Path) -> list[str]:
    return [e["message"] for e in read_events(project) if e["type"] == "warning"]


def _builds(fid: str = "feat-01") -> list[list[dict]]:
    """The steps that build and report a feature the default check accepts."""
    return [[edit_create(f"features/{fid}.txt", "done\n")], [report(f"Implemented {fid}")]]


def test_an_empty_text_block_in_an_answer_is_not_sent_back(fake_api, project):
    fake_api.default_plan = [[text(""), edit_create("features/feat-01.txt", "done\n")], [report("done")]]
    spec = write_spec(project, 1)

    result = run_cli(["run", str(spec)], project, fake_api)

    assert result.code == 0, result.stderr
    assert all(r.status == 200 for r in fake_api.requests), [r.outcome for r in fake_api.requests]
    second = fake_api.agent_requests("feat-01")[1].body["messages"][1]
    assert second["role"] == "assistant" and [b["type"] for b in second["content"]] == ["tool_use"]


def test_an_unknown_block_type_is_left_out_with_one_warning_naming_it(fake_api, project):
    mystery = {"type": "hologram_block", "data": "?"}
    fake_api.default_plan = [[mystery, edit_create("features/feat-01.txt", "done\n")], [mystery, report("done")]]
    spec = write_spec(project, 1)

    result = run_cli(["run", str(spec)], project, fake_api)

    assert result.code == 0, result.stderr
    assert all(r.status == 200 for r in fake_api.requests)
    assert result.stderr.count("hologram_block") == 1
    assert sum("hologram_block" in w for w in _warnings(project)) == 1
    assert "hologram_block" not in json.dumps([r.body for r in fake_api.agent_requests()])


def test_a_tool_call_cut_at_max_tokens_is_not_run_and_the_model_is_told(fake_api, project):
    cut = cut_tool_use(EDITOR, {"command": "create", "path": "features/feat-01.txt", "file_text": "x" * 400}, 12)
    fake_api.default_plan = [[text("Writing the file."), cut], *_builds()]
    spec = write_spec(project, 1)

    result = run_cli(["run", str(spec), "--json"], project, fake_api)

    assert result.code == 0, result.stderr
    assert "cut off at max_tokens" in result.stderr
    assert any("cut off at max_tokens" in w for w in _warnings(project))
    answer = fake_api.agent_requests("feat-01")[1].body["messages"][-1]["content"][0]
    assert answer["type"] == "tool_result" and answer["is_error"] is True
    assert "cut off at max_tokens" in answer["content"] and "NoneType" not in answer["content"]
    calls = [e for e in result.events() if e["type"] == "tool_call"]
    assert calls[0]["isError"] is True  # the cut call, not run


def test_pause_turn_is_continued_in_the_same_attempt(fake_api, project):
    fake_api.default_plan = [[text("Searching the docs first."), stop_reason("pause_turn")], *_builds()]
    spec = write_spec(project, 1, max_attempts=2)

    result = run_cli(["run", str(spec)], project, fake_api)

    assert result.code == 0, result.stderr
    assert [a["attempt"] for a in _log(project)["attemptHistory"]] == [1]
    resumed = fake_api.agent_requests("feat-01")[1].body["messages"]
    assert resumed[-1]["role"] == "assistant" and resumed[-1]["content"][0]["text"] == "Searching the docs first."


def test_a_refusal_is_reported_and_not_retried_with_the_same_prompt(fake_api, project):
    fake_api.default_plan = [[text("I can't help with that."), stop_reason("refusal")]]
    spec = write_spec(project, 1, max_attempts=3)

    result = run_cli(["run", str(spec), "--json"], project, fake_api)

    assert result.code == 1
    assert "refused" in result.stderr
    assert len(fake_api.agent_requests("feat-01")) == 1  # one attempt, not three
    log = _log(project)
    assert log["attemptHistory"][0]["stop"] == "refusal"
    finished = next(e for e in result.events() if e["type"] == "feature_finished")
    assert finished["status"] == "failed" and "refused" in finished["reason"]


def test_a_full_context_window_is_reported_and_the_retry_prompt_says_so(fake_api, project):
    fake_api.default_plan = [[text("Still reading."), stop_reason("model_context_window_exceeded")]]
    spec = write_spec(project, 1, max_attempts=2)

    result = run_cli(["run", str(spec)], project, fake_api)

    assert result.code == 1
    assert "context window" in result.stderr
    assert [a["stop"] for a in _log(project)["attemptHistory"]] == ["model_context_window_exceeded"] * 2
    retry_prompt = fake_api.agent_requests("feat-01")[1].body["messages"][0]["content"][0]["text"]
    assert "## Last Verification Result" in retry_prompt and "context window" in retry_prompt


def test_a_400_on_every_call_is_shown_and_stops_the_feature_after_one_request(fake_api, project):
    fake_api.faults = lambda _i, _r: Fault.http(400, "messages.0.content.0.text: text content blocks must be non-empty")
    spec = write_spec(project, 2, max_attempts=3)

    result = run_cli(["run", str(spec)], project, fake_api)

    assert result.code == 1
    assert "text content blocks must be non-empty" in result.stderr
    assert len(fake_api.agent_requests("feat-01")) == 1  # not three identical attempts
    assert "would be refused again" in _log(project)["reason"] if "reason" in _log(project) else True
    assert _log(project)["attemptHistory"][0]["stop"] == "rejected"


def test_an_error_event_mid_stream_is_retried_like_a_transient_fault(fake_api, project):
    fake_api.faults = lambda index, _r: Fault.stream_error(after_events=6) if index == 1 else None
    spec = write_spec(project, 1)

    result = run_cli(["run", str(spec)], project, fake_api)

    assert result.code == 0, result.stderr
    assert "overloaded_error mid-stream" in result.stderr and "retrying" in result.stderr
    assert fake_api.requests[1].outcome == "fault:stream_error"


def test_a_connection_dropped_mid_stream_is_retried(fake_api, project):
    fake_api.faults = lambda index, _r: Fault.stream_drop(after_events=5) if index == 0 else None
    spec = write_spec(project, 1)

    result = run_cli(["run", str(spec)], project, fake_api)

    assert result.code == 0, result.stderr
    assert "connection was lost mid-answer" in result.stderr
    assert all(r.body.get("stream") is True for r in fake_api.requests if r.kind in ("agent", "summarizer"))


def test_a_budget_on_a_model_that_wants_adaptive_thinking_is_sent_as_adaptive_without_raw_warnings(fake_api, project):
    spec = write_spec(project, 1)

    result = run_cli(["run", str(spec), "--model", "claude-opus-4-6", "--thinking", "4096"], project, fake_api)

    assert result.code == 0, result.stderr
    assert all(r.body["thinking"] == {"type": "adaptive"} for r in fake_api.agent_requests())
    assert "Warning:" not in result.stderr and "warnings.warn" not in result.stderr


def test_under_a_cost_cap_thinking_keeps_room_for_the_answer(fake_api, project):
    spec = write_spec(project, 3)

    result = run_cli(["run", str(spec), "--model", "claude-sonnet-4-5", "--thinking", "4096", "--max-cost", "0.09"],
                     project, fake_api)

    assert result.code in (0, 3), result.stderr
    squeezed = [r.body for r in fake_api.agent_requests() if r.body["max_tokens"] < 4096 + 1024]
    assert squeezed, "the cap never lowered max_tokens: raise the test's pressure"
    for body in squeezed:
        if "thinking" in body:
            assert body["thinking"]["budget_tokens"] <= body["max_tokens"] - 1024
    if any("thinking" not in body for body in squeezed):
        assert "thinking left out of this call" in result.stderr


def test_plan_stops_on_a_400_in_a_repair_with_one_line_and_no_spec(fake_api, project):
    (project / "idea.md").write_text("# Notes app\nA tiny notes app with add and list.\n")
    answers = iter([{"project": "notes", "features": []}])
    fake_api.tool_answers = lambda name, body: next(answers)
    fake_api.faults = lambda index, _r: Fault.http(400, "messages.2.content.0: tool_result refused") if index >= 1 else None

    result = run_cli(["plan", "idea.md", "--no-write-checks"], project, fake_api)

    assert result.code == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert "tool_result refused" in result.stderr and "no spec written" in result.stderr
    assert not (project / "spec.json").exists()


def test_plan_says_an_answer_was_cut_at_max_tokens_in_its_repair(fake_api, project):
    (project / "idea.md").write_text("# Notes app\nA tiny notes app with add and list.\n")
    feature = {"id": "add", "name": "Add", "description": "Add a note.", "verify": "true"}
    answers = iter([{"project": "notes", "features": [feature] * 5, "_cut_at": 20},
                    {"project": "notes", "description": "Notes.", "features": [feature]}])
    fake_api.tool_answers = lambda name, body: next(answers)

    result = run_cli(["plan", "idea.md", "--no-write-checks"], project, fake_api)

    assert result.code == 0, result.stderr
    repair = fake_api.forced_tool_calls[1].body["messages"][-1]["content"][0]
    assert repair["type"] == "tool_result" and "cut off at max_tokens" in repair["content"]
    assert "non-empty list" not in repair["content"]


def test_every_call_is_streamed_and_a_plain_tool_use_reply_still_works(fake_api, project):
    fake_api.default_plan = [[tool_use("bash", {"command": "mkdir -p features && echo done > features/feat-01.txt"})],
                             [report("done")]]
    spec = write_spec(project, 1)

    result = run_cli(["run", str(spec), "--summarize-every", "1"], project, fake_api)

    assert result.code == 0, result.stderr
    assert {r.kind for r in fake_api.requests} >= {"agent", "summarizer"}
    assert all(r.body.get("stream") is True for r in fake_api.requests)


def test_ctrl_c_mid_stream_stops_the_call_at_once_and_books_its_worst_case(fake_api, project):
    import signal
    import subprocess
    import time

    from tests.cli_helpers import cli_env, orchestrate_command

    fake_api.faults = lambda index, _r: Fault.slow_stream(gap=2.0) if index == 0 else None
    spec = write_spec(project, 1)
    proc = subprocess.Popen(orchestrate_command("run", str(spec)), cwd=project, env=cli_env(fake_api),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while fake_api.calls < 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(3)  # the answer is streaming: a few events are in, many more to come
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)

    assert proc.returncode == 130, err
    assert time.monotonic() - sent < 20, "Ctrl-C waited for the rest of the stream"  # it has ~40 s left
    assert "Traceback" not in err
    totals = read_json(project / ".autonomous" / "state" / "execution-state.json")["totals"]
    assert totals["unconfirmedCostUsd"] > 0  # the cut-off call at its worst case: the API may have billed it
    assert totals["costUsd"] >= totals["unconfirmedCostUsd"]
    assert totals["unconfirmedCalls"] == 1  # and the closing line says how many calls that figure covers
    assert f"${totals['unconfirmedCostUsd']:.4f} booked at worst case for 1 call cut off before its answer" in out, out
