"""`--provider bedrock|vertex`: the SDK's own Bedrock and Vertex clients, their request shapes
and credentials, and no credential of theirs in any file or output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fake_messages_api.cloud_providers import TEST_AWS_ACCESS_KEY, TEST_AWS_SECRET_KEY, TEST_VERTEX_TOKEN
from fake_messages_api.scripted_agent.plans import bash, edit_create, report, text
from orchestrator.config import RunConfig
from orchestrator.llm.endpoint.providers import UnknownModelMapping, native_model_id
from tests.cli_helpers import plain_summarizer, run_cli, write_spec

SESSION_TOKEN = "FwoGZXIvYXdzEFAKESESSIONTOKEN0123456789abcdef"
PRIVATE_KEY_LINE = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDfakefakefake"


def _nosy_plan(credentials_file: Path):
    """Builds the feature, after trying to read every credential it can reach."""
    def plan(turn):
        fid = turn.feature_id
        steps = [
            [bash(f"env > env-{fid}.txt; cat /proc/$PPID/environ > parent-{fid}.txt 2>&1; true")],
            [bash(f"cat {credentials_file}")],
            [edit_create(f"features/{fid}.txt", "ok\n")],
            [report(f"Implemented {fid}")],
            [text("done")],
        ]
        return steps[min(turn.step, len(steps) - 1)]
    return plan


def _credentials_file(tmp_path: Path) -> Path:
    path = tmp_path / "google-sa.json"
    key = f"-----BEGIN PRIVATE KEY-----\n{PRIVATE_KEY_LINE}\n-----END PRIVATE KEY-----\n"
    path.write_text(json.dumps({"type": "service_account", "project_id": "proj-1", "private_key_id": "0123456789abcdef0123",
                                "private_key": key, "client_email": "sa@proj-1.iam.gserviceaccount.com"}))
    return path


def _assert_nowhere(secrets: list[str], project: Path, fake, *outputs: str) -> None:
    for path in project.rglob("*"):
        if path.is_file() and ".git" not in path.parts:
            content = path.read_bytes()
            for secret in secrets:
                assert secret.encode() not in content, f"{secret[:8]}... in {path}"
    for output in outputs:
        assert not any(secret in output for secret in secrets)
    for request in fake.requests:  # what the agent's tools read went to the model redacted
        body = json.dumps(request.body)
        assert not any(secret in body for secret in secrets), request.path


def test_a_bedrock_run_completes_with_signed_requests_and_no_credential_anywhere(fake_api, project, tmp_path):
    fake_api.default_plan = _nosy_plan(tmp_path / "no-such-file")
    fake_api.summarizer = plain_summarizer
    spec = write_spec(project, 2)

    result = run_cli(
        ["run", str(spec), "--provider", "bedrock", "--model", "claude-sonnet-4-5", "--summarizer-model",
         "claude-haiku-4-5", "--summarize-every", "1", "--json"], project, key=None,
        AWS_REGION="us-east-1", AWS_ACCESS_KEY_ID=TEST_AWS_ACCESS_KEY, AWS_SECRET_ACCESS_KEY=TEST_AWS_SECRET_KEY,
        AWS_SESSION_TOKEN=SESSION_TOKEN, AWS_EC2_METADATA_DISABLED="true",
        ANTHROPIC_BEDROCK_BASE_URL=fake_api.base_url, process=True,  # the agent reads the CLI's /proc/PID/environ
    )

    assert result.code == 0, result.stderr
    assert fake_api.requests and all(r.provider == "bedrock" and r.status == 200 for r in fake_api.requests)
    paths = {r.path for r in fake_api.requests}
    assert paths == {"/model/anthropic.claude-sonnet-4-5-20250929-v1:0/invoke-with-response-stream",
                     "/model/anthropic.claude-haiku-4-5-20251001-v1:0/invoke-with-response-stream"}
    for request in fake_api.requests:
        sent = json.loads(request.raw)
        assert "model" not in sent and isinstance(sent["anthropic_version"], str)
        assert request.headers["authorization"].startswith(f"AWS4-HMAC-SHA256 Credential={TEST_AWS_ACCESS_KEY}/")
        assert request.headers["x-amz-security-token"] == SESSION_TOKEN
    assert {r.kind for r in fake_api.requests} == {"agent", "summarizer"}
    _assert_nowhere([TEST_AWS_SECRET_KEY, SESSION_TOKEN], project, fake_api, result.stdout, result.stderr)


def test_a_vertex_run_completes_with_its_request_shape_and_no_credential_anywhere(fake_api, project, tmp_path):
    credentials = _credentials_file(tmp_path)
    fake_api.default_plan = _nosy_plan(credentials)
    spec = write_spec(project, 2)

    result = run_cli(
        ["run", str(spec), "--model", "claude-sonnet-4-5", "--summarizer-model", "claude-haiku-4-5", "--json"],
        project, key=None, ORCHESTRATE_PROVIDER="vertex", CLOUD_ML_REGION="us-east5",
        ANTHROPIC_VERTEX_PROJECT_ID="proj-1", GOOGLE_OAUTH_ACCESS_TOKEN=TEST_VERTEX_TOKEN,
        GOOGLE_APPLICATION_CREDENTIALS=str(credentials), ANTHROPIC_VERTEX_BASE_URL=fake_api.base_url + "/v1",
        process=True,  # the agent reads the CLI's /proc/PID/environ
    )

    assert result.code == 0, result.stderr
    assert fake_api.requests and all(r.provider == "vertex" and r.status == 200 for r in fake_api.requests)
    prefix = "/v1/projects/proj-1/locations/us-east5/publishers/anthropic/models/"
    assert {r.path for r in fake_api.agent_requests()} == {prefix + "claude-sonnet-4-5@20250929:streamRawPredict"}
    for request in fake_api.requests:
        assert "model" not in json.loads(request.raw)
        assert request.headers["authorization"] == f"Bearer {TEST_VERTEX_TOKEN}"
    _assert_nowhere([TEST_VERTEX_TOKEN, PRIVATE_KEY_LINE, "0123456789abcdef0123"], project, fake_api,
                    result.stdout, result.stderr)


def test_wrong_aws_credentials_stop_the_run_with_what_to_check(fake_api, project):
    spec = write_spec(project, 1)

    result = run_cli(
        ["run", str(spec), "--provider", "bedrock", "--model", "claude-sonnet-4-5", "--summarizer-model",
         "claude-haiku-4-5"], project, key=None, AWS_REGION="us-east-1", AWS_ACCESS_KEY_ID=TEST_AWS_ACCESS_KEY,
        AWS_SECRET_ACCESS_KEY="not-the-secret-at-all-0123", AWS_EC2_METADATA_DISABLED="true",
        ANTHROPIC_BEDROCK_BASE_URL=fake_api.base_url,
    )

    assert result.code != 0
    assert "AWS credentials" in result.stderr and "not-the-secret" not in result.stderr


def test_a_model_without_a_known_provider_id_is_refused_before_any_call(fake_api, project):
    spec = write_spec(project, 1)

    result = run_cli(  # a family no mapped model belongs to: nothing to fall back on
        ["run", str(spec), "--provider", "bedrock", "--model", "claude-quux-9-9"], project, key=None,
        AWS_REGION="us-east-1", AWS_ACCESS_KEY_ID=TEST_AWS_ACCESS_KEY, AWS_SECRET_ACCESS_KEY=TEST_AWS_SECRET_KEY,
        ANTHROPIC_BEDROCK_BASE_URL=fake_api.base_url,
    )

    assert result.code == 2
    assert "no bedrock model id is known for 'claude-quux-9-9'" in result.stderr
    assert "--model anthropic." in result.stderr
    assert fake_api.calls == 0


def test_vertex_without_region_says_what_to_set(fake_api, project):
    spec = write_spec(project, 1)
    result = run_cli(["run", str(spec), "--provider", "vertex", "--model", "claude-sonnet-4-5", "--summarizer-model",
                      "claude-haiku-4-5"], project, key=None, GOOGLE_OAUTH_ACCESS_TOKEN=TEST_VERTEX_TOKEN,
                     ANTHROPIC_VERTEX_PROJECT_ID="proj-1")
    assert result.code == 2 and "CLOUD_ML_REGION" in result.stderr


def test_model_ids_per_provider() -> None:
    assert native_model_id("anthropic", "claude-sonnet-4-5") == "claude-sonnet-4-5"
    assert native_model_id("bedrock", "claude-sonnet-4-5-20250929") == "anthropic.claude-sonnet-4-5-20250929-v1:0"
    assert native_model_id("vertex", "claude-opus-4-1") == "claude-opus-4-1@20250805"
    # Provider-native ids pass through: the way to use a model this table does not know.
    for native in ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "arn:aws:bedrock:us-east-1:1:inference-profile/x"):
        assert native_model_id("bedrock", native) == native
    assert native_model_id("vertex", "claude-new@20300101") == "claude-new@20300101"
    with pytest.raises(UnknownModelMapping, match="pass vertex's own id"):
        native_model_id("vertex", "claude-new")
    assert RunConfig(provider="bedrock").provider == "bedrock"


# ---- issue 30: the defaults on every provider -------------------------------------------------
BEDROCK_ENV = {"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": TEST_AWS_ACCESS_KEY,
               "AWS_SECRET_ACCESS_KEY": TEST_AWS_SECRET_KEY, "AWS_EC2_METADATA_DISABLED": "true"}
VERTEX_ENV = {"CLOUD_ML_REGION": "us-east5", "ANTHROPIC_VERTEX_PROJECT_ID": "proj-1",
              "GOOGLE_OAUTH_ACCESS_TOKEN": TEST_VERTEX_TOKEN}


def _provider_env(provider: str, fake) -> dict[str, str]:
    if provider == "bedrock":
        return {**BEDROCK_ENV, "ANTHROPIC_BEDROCK_BASE_URL": fake.base_url}
    return {**VERTEX_ENV, "ANTHROPIC_VERTEX_BASE_URL": fake.base_url + "/v1"}


@pytest.mark.parametrize("provider", ["bedrock", "vertex"])
def test_the_demo_spec_runs_end_to_end_on_each_provider_with_the_default_models(tmp_path, provider):
    import subprocess

    from orchestrator.demo.scripted import demo_summarizer
    from orchestrator.demo.textkit_plan import textkit_plan
    from orchestrator.llm.models import default_agent_model, default_summarizer_model
    from tests.example_specs import first_demo_features
    from tests.fake_api_fixtures import running_fake_api

    # The demo's first two features (slugify fails once and is retried), summarized after each:
    # both default models answer through the provider, at a quarter of the whole demo's time.
    spec = first_demo_features(tmp_path / "spec", 2)
    project = tmp_path / "textkit"
    project.mkdir()
    subprocess.run(["git", "init", "--quiet", str(project)], check=True)
    with running_fake_api(default_plan=textkit_plan, summarizer=demo_summarizer) as fake:
        result = run_cli(["run", str(spec), "--provider", provider, "--summarize-every", "1"], project, key=None,
                         timeout=600, **_provider_env(provider, fake))
        requests = fake.requests

    assert result.code == 0, result.stderr
    assert "no bedrock model id" not in result.stderr and "no vertex model id" not in result.stderr
    assert requests and all(r.provider == provider and r.status == 200 for r in requests)
    models = {r.body["model"] for r in requests}
    agent, summarizer = default_agent_model(), default_summarizer_model()
    if provider == "bedrock":
        assert models == {f"anthropic.{agent}", f"anthropic.{summarizer}"}
        assert all(r.path.endswith("/invoke-with-response-stream") for r in requests)
    else:
        assert models == {agent, summarizer}
        assert all(r.path.endswith(":streamRawPredict") for r in requests)


def test_a_model_the_provider_table_lacks_falls_back_to_the_newest_of_its_family_with_a_notice(fake_api, project):
    spec = write_spec(project, 1)

    result = run_cli(["run", str(spec), "--provider", "bedrock", "--model", "claude-sonnet-9-9"], project, key=None,
                     **_provider_env("bedrock", fake_api))

    assert result.code == 0, result.stderr
    assert "no bedrock model id is known for 'claude-sonnet-9-9': using claude-sonnet-5-5" in result.stderr
    assert {r.path for r in fake_api.agent_requests()} == {
        "/model/anthropic.claude-sonnet-5-5/invoke-with-response-stream"}


@pytest.mark.parametrize("provider", ["bedrock", "vertex"])
def test_plan_takes_provider_and_checks_only_the_model_it_calls(fake_api, project, provider):
    (project / "idea.md").write_text("# Notes\nAdd and list notes.\n")
    feature = {"id": "add", "name": "Add", "description": "Add a note.", "verify": "true"}
    fake_api.tool_answers = lambda name, body: {"project": "notes", "features": [feature]}

    result = run_cli(["plan", "idea.md", "--no-write-checks", "--provider", provider], project, key=None,
                     ORCHESTRATE_SUMMARIZER_MODEL="claude-quux-1-1",  # never called by plan: not checked
                     **_provider_env(provider, fake_api))

    assert result.code == 0, result.stderr
    assert (project / "spec.json").exists()
    assert fake_api.forced_tool_calls and all(r.provider == provider for r in fake_api.forced_tool_calls)


def test_context_count_counts_with_the_model_the_run_used(fake_api, project):
    spec = write_spec(project, 2)
    ran = run_cli(["run", str(spec), "--model", "claude-opus-4-6", "--only", "feat-01"], project, fake_api)
    assert ran.code == 0, ran.stderr

    counted = run_cli(["context", "feat-02", "--count"], project, fake_api)

    assert counted.code == 0, counted.stderr
    counts = [r for r in fake_api.requests if r.kind == "count_tokens"]
    assert counts and {r.body["model"] for r in counts} == {"claude-opus-4-6"}
    assert "count_tokens, claude-opus-4-6" in counted.stdout
