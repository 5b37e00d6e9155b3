"""`--escalate-model`: the attempt after a failed one runs on the stronger model, and every
record says which model made each call."""

from __future__ import annotations

import pytest

from fake_messages_api.scripted_agent.plans import edit_create, report, text
from orchestrator.config import RunConfig
from orchestrator.llm.attempt_model import attempt_model, escalates
from orchestrator.llm.costs.pricing import PriceTable, TokenUsage
from tests.cli_helpers import read_json, run_cli, write_spec

SMALL, STRONG = "claude-haiku-4-5", "claude-opus-4-5"


def _small_model_fails(turn):
    """Writes the right value only when the request is for the strong model."""
    value = "42" if turn.request["model"] == STRONG else "7"
    steps = [[edit_create("value.txt", value + "\n")], [report("wrote the value")], [text("done")]]
    return steps[min(turn.step, 2)]


def test_a_failed_first_attempt_is_retried_on_the_escalation_model(fake_api, project):
    fake_api.plans["feat-01"] = _small_model_fails
    spec = write_spec(project, 2, extra={"feat-01": {"verify": 'test "$(cat value.txt)" = 42'}})
    report_path = project / "report.json"

    result = run_cli(
        ["run", str(spec), "--model", SMALL, "--escalate-model", STRONG, "--max-attempts", "3",
         "--json", "--report", str(report_path)], project, fake_api,
    )

    assert result.code == 0, result.stderr
    starts = [r for r in fake_api.agent_requests("feat-01") if len(r.body["messages"]) == 1]
    assert [r.body["model"] for r in starts] == [SMALL, STRONG]
    assert {r.body["model"] for r in fake_api.agent_requests("feat-02")} == {SMALL}  # passed first time
    log = read_json(project / ".autonomous/logs/feat-01.json")
    assert [a["model"] for a in log["attemptHistory"]] == [SMALL, STRONG]
    events = result.events()
    started = [e for e in events if e["type"] == "feature_started" and e["id"] == "feat-01"]
    assert [(e["model"], e.get("escalated", False)) for e in started] == [(SMALL, False), (STRONG, True)]
    calls = [e for e in events if e["type"] == "api_call" and e["feature"] == "feat-01"]
    assert {e["model"] for e in calls} == {SMALL, STRONG}
    run_report = read_json(report_path)
    assert run_report["escalateModel"] == STRONG
    assert [f["models"] for f in run_report["features"]] == [[SMALL, STRONG], [SMALL]]
    by_model = run_report["totals"]["byModel"]
    assert by_model[STRONG]["calls"] == sum(e["model"] == STRONG for e in calls)
    # Each model's calls are priced at its own rate.
    for model in (SMALL, STRONG):
        tokens = TokenUsage.model_validate(by_model[model]["tokens"])
        assert by_model[model]["costUsd"] == pytest.approx(PriceTable().cost(model, tokens), rel=1e-6)
    assert PriceTable().price_for(STRONG).output > PriceTable().price_for(SMALL).output
    finished = next(e for e in events if e["type"] == "run_finished")
    assert set(finished["costByModel"]) >= {SMALL, STRONG}
    state = read_json(project / ".autonomous/state/execution-state.json")
    assert state["totals"]["byModel"][STRONG]["calls"] == by_model[STRONG]["calls"]


def test_escalate_on_last_keeps_the_small_model_until_the_last_attempt(fake_api, project):
    fake_api.plans["feat-01"] = _small_model_fails
    spec = write_spec(project, 1, verify='test "$(cat value.txt)" = 42')
    (project / "orchestrate.toml").write_text(f'escalate_model = "{STRONG}"\nescalate_on = "last"\n')

    result = run_cli(["run", str(spec), "--model", SMALL, "--max-attempts", "3"], project, fake_api)

    assert result.code == 0, result.stderr
    starts = [r for r in fake_api.agent_requests("feat-01") if len(r.body["messages"]) == 1]
    assert [r.body["model"] for r in starts] == [SMALL, SMALL, STRONG]
    assert "escalated to claude-opus-4-5" in result.stdout


def test_the_escalation_model_comes_from_the_environment_too(fake_api, project):
    fake_api.plans["feat-01"] = _small_model_fails
    spec = write_spec(project, 1, verify='test "$(cat value.txt)" = 42')

    result = run_cli(["run", str(spec), "--model", SMALL], project, fake_api, ORCHESTRATE_ESCALATE_MODEL=STRONG)

    assert result.code == 0, result.stderr
    assert fake_api.agent_requests("feat-01")[-1].body["model"] == STRONG


def test_which_attempt_escalates() -> None:
    on_failure = RunConfig(model=SMALL, escalate_model=STRONG)
    on_last = RunConfig(model=SMALL, escalate_model=STRONG, escalate_on="last")
    assert [escalates(on_failure, n, 3) for n in (1, 2, 3)] == [False, True, True]
    assert [escalates(on_last, n, 3) for n in (1, 2, 3)] == [False, False, True]
    assert not escalates(on_last, 1, 1)  # the only attempt is the first: no failure to escalate from
    assert not escalates(RunConfig(model=SMALL), 2, 3)
    assert attempt_model(on_failure, 2, 3).model == STRONG


def test_a_bad_escalate_on_is_a_usage_error(fake_api, project):
    spec = write_spec(project, 1)
    result = run_cli(["run", str(spec), "--escalate-on", "sometimes"], project, fake_api)
    assert result.code == 2
    assert "--escalate-on" in result.stderr and not fake_api.requests
