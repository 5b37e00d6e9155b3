"""A run books each call at its model's list price (issue 40, break 6): Opus 4, 4.1 and 3 at
$15/$75 per million tokens, not at the later Opus models' $5/$25; a model id the price table
does not know at the dearest price it does. Mode: the built-in agent loop (the Claude Code
agent books through the same table, `tests/e2e/claude_code/test_model_endpoint_e2e.py`)."""

from __future__ import annotations

import pytest

from tests.cli_helpers import read_json, run_cli, write_spec

LIST_PRICES = {"claude-opus-4-1": (15.0, 75.0), "claude-opus-4-20250514": (15.0, 75.0),
               "claude-3-opus-20240229": (15.0, 75.0), "claude-opus-4-5": (5.0, 25.0)}


def _list_price(usage, input_price: float, output_price: float) -> float:
    """What the API bills for `usage` (the fake's ledger), with Anthropic's cache multipliers."""
    return (usage.input_tokens * input_price + usage.cache_creation_input_tokens * input_price * 1.25
            + usage.cache_read_input_tokens * input_price * 0.1 + usage.output_tokens * output_price) / 1e6


@pytest.mark.attack
@pytest.mark.parametrize("model", sorted(LIST_PRICES))
def test_a_run_records_what_its_model_is_billed(fake_api, project, model):
    spec = write_spec(project, 1)
    report = project / "report.json"

    result = run_cli(["run", str(spec), "--model", model, "--json", "--report", str(report)], project, fake_api)

    assert result.code == 0, result.stderr
    billed = _list_price(fake_api.usage.agent, *LIST_PRICES[model])
    assert billed > 0
    recorded = read_json(report)["totals"]["byModel"][model]["costUsd"]
    assert recorded == pytest.approx(billed, rel=1e-3)


@pytest.mark.attack
def test_an_unknown_model_is_booked_at_the_dearest_price(fake_api, project):
    spec = write_spec(project, 1)
    report = project / "report.json"

    result = run_cli(["run", str(spec), "--model", "claude-opus-9-9", "--json", "--report", str(report)],
                     project, fake_api)

    assert result.code == 0, result.stderr
    recorded = read_json(report)["totals"]["byModel"]["claude-opus-9-9"]["costUsd"]
    assert recorded >= _list_price(fake_api.usage.agent, 15.0, 75.0) > 0
