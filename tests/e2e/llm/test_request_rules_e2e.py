"""Every request the program sends, in every mode, checked strictly against the installed SDK's
request types (extra keys refused, lists walked, lazy iterators drained) and against the
API's rules the types leave out (`tests/request_rules.py`)."""

from __future__ import annotations

import pytest

from fake_messages_api.faults import FailCalls, Fault
from fake_messages_api.scripted_agent.agent_turn import AgentTurn
from fake_messages_api.scripted_agent.plans import cut_tool_use, edit_create, report, stop_reason, text
from tests.cli_helpers import run_cli, write_spec
from tests.request_rules import check_request

EDITOR = "str_replace_based_edit_tool"


def _awkward_plan(turn: AgentTurn) -> list[dict]:
    """Every reply shape at once, and a first attempt that fails its check: retries happen."""
    fid = turn.feature_id
    if not turn.is_retry:
        return [[text(""), {"type": "hologram_block"}, text("Looking first."), stop_reason("pause_turn")],
                [cut_tool_use(EDITOR, {"command": "create", "path": "x.txt", "file_text": "y" * 300}, 15)],
                [text("I stop here.")]][min(turn.step, 2)]
    steps = [[text("Retrying."), edit_create(f"features/{fid}.txt", "done\n")], [report(f"Implemented {fid}")],
             [text("done")]]
    return steps[min(turn.step, 2)]


MODES = {
    "plain-with-faults": ["--summarize-every", "1"],
    "thinking-budget-under-a-cap": ["--model", "claude-sonnet-4-5", "--thinking", "4096", "--max-cost", "0.2"],
    "thinking-auto-adaptive": ["--model", "claude-opus-4-6", "--thinking", "auto"],
    "thinking-auto-budget-only": ["--model", "claude-sonnet-4-5", "--thinking", "auto"],
    "escalation": ["--escalate-model", "claude-opus-4-6", "--thinking", "4096", "--model", "claude-sonnet-4-5"],
    "replay": ["--context", "replay"],
    "window": ["--context", "window"],
}


@pytest.mark.parametrize("mode", sorted(MODES))
def test_every_request_of_a_run_is_valid_under_the_sdk_types_and_the_api_rules(fake_api, project, mode):
    fake_api.default_plan = _awkward_plan
    fake_api.faults = FailCalls([1, 4], Fault.stream_error(after_events=4)) if mode == "plain-with-faults" else None
    spec = write_spec(project, 2, max_attempts=2)

    result = run_cli(["run", str(spec), *MODES[mode]], project, fake_api)

    assert result.code in (0, 1, 3), result.stderr
    sent = [r for r in fake_api.requests if r.kind in ("agent", "summarizer")]
    assert len(sent) >= 4
    problems = {r.index: check_request(r.body, beta="beta=true" in r.path) for r in sent}
    assert not {index: found for index, found in problems.items() if found}


def test_plan_and_context_count_requests_are_valid_too(fake_api, project):
    (project / "idea.md").write_text("# Notes\nAdd and list notes.\n")
    feature = {"id": "add", "name": "Add", "description": "Add a note.", "verify": "true"}
    answers = iter([{"project": "notes", "features": []}, {"project": "notes", "features": [feature]}])
    fake_api.tool_answers = lambda name, body: next(answers)

    planned = run_cli(["plan", "idea.md", "--no-write-checks"], project, fake_api)
    counted = run_cli(["context", "add", "--spec", "spec.json", "--count"], project, fake_api)

    assert planned.code == 0, planned.stderr
    assert counted.code == 0, counted.stderr
    plan_calls = fake_api.forced_tool_calls
    assert len(plan_calls) == 2
    for request in plan_calls:
        assert check_request(request.body) == []
    counts = [r for r in fake_api.requests if r.kind == "count_tokens"]
    assert counts and all(check_request(r.body, endpoint="count_tokens") == [] for r in counts)


def test_the_checker_refuses_what_the_api_would():
    good = {"model": "m", "max_tokens": 4000, "stream": True,
            "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}
    assert check_request(good) == []
    assert check_request({**good, "unknown_key": 1})
    assert check_request({**good, "messages": [{"role": "user", "content": [{"type": "text", "text": ""}]}]})
    assert check_request({**good, "messages": [{"role": "user", "content": [{"type": "text", "text": "a", "x": 1}]}]})
    assert check_request({**good, "thinking": {"type": "enabled", "budget_tokens": 3500}})
    dangling = [*good["messages"], {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "bash", "input": {}}]}, {"role": "user", "content": [
            {"type": "text", "text": "no result"}]}]
    assert check_request({**good, "messages": dangling})
    marks = [{"type": "text", "text": str(i), "cache_control": {"type": "ephemeral"}} for i in range(5)]
    assert check_request({**good, "messages": [{"role": "user", "content": marks}]})
