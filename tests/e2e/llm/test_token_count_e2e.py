"""Honest token estimates: caps count what the API adds for tools, and `context --count` asks
the API's count_tokens for the exact figure."""

from __future__ import annotations

import re

from fake_messages_api.cloud_providers import TEST_VERTEX_TOKEN
from tests.cli_helpers import run_cli, write_spec

COUNTED = re.compile(r"whole first request \(count_tokens, [^)]+\): (\d+) tokens; the estimate is ([+-]\d+\.\d)%")


def test_context_count_asks_count_tokens_for_the_request_a_run_sends(fake_api, project):
    spec = write_spec(project, 1)

    shown = run_cli(["context", "feat-01", "--spec", str(spec), "--count", "--model", "claude-sonnet-4-5"],
                    project, fake_api)

    assert shown.code == 0, shown.stderr
    match = COUNTED.search(shown.stdout)
    assert match, shown.stdout
    counts = [r for r in fake_api.requests if r.kind == "count_tokens"]
    assert len(counts) == 1 and int(match.group(1)) == counts[0].response["input_tokens"]
    counted = counts[0].body
    assert counted["model"] == "claude-sonnet-4-5" and "max_tokens" not in counted

    assert run_cli(["run", str(spec), "--model", "claude-sonnet-4-5"], project, fake_api).code == 0
    sent = fake_api.agent_requests("feat-01")[0].body
    assert {k: counted[k] for k in ("system", "tools", "messages")} == {k: sent[k] for k in ("system", "tools", "messages")}


def test_context_count_without_credentials_keeps_the_estimate(project):
    spec = write_spec(project, 1)
    shown = run_cli(["context", "feat-01", "--spec", str(spec), "--count"], project, None, key=None)
    assert shown.code == 0, shown.stderr
    assert "not counted, no credentials" in shown.stdout and "(estimate)" in shown.stdout


def test_context_count_on_vertex_uses_its_count_tokens_route(fake_api, project):
    spec = write_spec(project, 1)
    shown = run_cli(
        ["context", "feat-01", "--spec", str(spec), "--count", "--provider", "vertex", "--model", "claude-sonnet-4-5"],
        project, None, key=None, CLOUD_ML_REGION="us-east5", ANTHROPIC_VERTEX_PROJECT_ID="proj-1",
        GOOGLE_OAUTH_ACCESS_TOKEN=TEST_VERTEX_TOKEN, ANTHROPIC_VERTEX_BASE_URL=fake_api.base_url + "/v1",
    )
    assert shown.code == 0, shown.stderr
    assert COUNTED.search(shown.stdout), shown.stdout
    (request,) = fake_api.requests
    assert request.path.endswith("/publishers/anthropic/models/count-tokens:rawPredict")
    assert request.body["model"] == "claude-sonnet-4-5@20250929"


