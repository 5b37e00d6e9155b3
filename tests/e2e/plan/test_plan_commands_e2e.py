"""The parts of `orchestrate plan`: the red-check verdicts, merging chunks, confining check files,
the answer schemas, the spec's `red` field, and `validate --run-checks`."""

from __future__ import annotations

import json
from pathlib import Path

from orchestrator.llm.models import default_agent_model
from orchestrator.plan.red import red_check, syntax_problems
from orchestrator.plan.schema import spec_tool
from orchestrator.spec.load import load_spec
from tests.cli_helpers import run_cli
from tests.environments import unsandboxed


def test_a_real_syntax_error_and_a_real_missing_module_are_told_apart(tmp_path):
    (tmp_path / "t_broken.py").write_text("def test_x(:\n    pass\n")
    assert syntax_problems({"t_broken.py": (tmp_path / "t_broken.py").read_text()})
    (tmp_path / "check.py").write_text("import not_built_yet\n")
    check = red_check("python3 check.py", unsandboxed(tmp_path), timeout=30)
    assert (check.verdict, check.reason) == ("red", "the module not_built_yet is not built yet")
    assert red_check("true", unsandboxed(tmp_path), timeout=30).verdict == "vacuous"


def test_the_fake_api_answers_a_forced_tool_call_with_a_tool_use(fake_api):
    tool = spec_tool()
    message = fake_api.client().messages.create(
        model=default_agent_model(), max_tokens=2000, tools=[tool], tool_choice={"type": "tool", "name": tool["name"]},
        messages=[{"role": "user", "content": "plan"}],
    )
    assert message.stop_reason == "tool_use" and message.content[0].name == "submit_spec"
    assert set(message.content[0].input) == {"project", "description", "features"}
    assert fake_api.forced_tool_calls and fake_api.summarizer_calls == 0


def test_validate_run_checks_warns_for_each_pending_check_that_already_passes(tmp_path: Path):
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"features": [
        {"id": "vacuous", "name": "V", "description": "d", "verify": "true"},
        {"id": "real", "name": "R", "description": "d", "verify": "test -f built.txt"},
        {"id": "done", "name": "D", "description": "d", "verify": "true", "passes": True},
    ]}))

    outcome = run_cli(["validate", str(spec), "--run-checks"], tmp_path, key=None)

    assert outcome.code == 0, outcome.stderr
    assert "vacuous: its check already passes before the feature is built" in outcome.stderr
    assert "real:" not in outcome.stderr and "done" not in outcome.stdout
    assert "1 red, 1 already passing" in outcome.stdout
    assert load_spec(spec).spec.ids() == ["vacuous", "real", "done"]


