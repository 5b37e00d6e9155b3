"""`orchestrate demo --agent claude-code` and `orchestrate run --agent claude-code` on textkit,
with the REAL bundled Claude Code CLI.

The fake plays the demo's textkit script in Claude Code's tools (Read/Write, Edit, Bash and
`mcp__orchestrate__report_feature`); the CLI the `claude-agent-sdk` wheel ships executes them.
Everything around the agent must hold as it does for the built-in loop. One offline demo (no
key, the demo's own model, its own Ctrl-C during case-conversion and its resume) serves the
tests of the whole build: all eight features pass, slugify's failure is fed back and fixed, the
regression guard catches truncate's break, one checkpoint per feature, the reports' decisions
reach the Context Agent. Then a kill -9 resumes with nothing redone or lost, and `--jobs 3`.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fake_messages_api.scripted_agent.agent_turn import agent_turn
from fake_messages_api.server import FakeAPI
from orchestrator.demo import scripted
from orchestrator.demo.scripted import demo_model, demo_summarizer
from orchestrator.demo.textkit_plan import CHECK_FILES, textkit_plan
from tests.cli_helpers import CliResult, cli_env, orchestrate_command, read_events, read_json, run_cli
from tests.example_specs import first_demo_features
from tests.fake_api_fixtures import running_fake_api

pytest.importorskip(
    "claude_agent_sdk", reason="the claude-code extra is not installed: pip install 'orchestrate[claude-code]'"
)
pytestmark = pytest.mark.slow

FEATURES = list(CHECK_FILES)
STATE = ".autonomous/state/execution-state.json"
RUN_TIMEOUT = 900.0  # eight features, each a few Claude Code sessions, on a loaded 2-core machine


def _isolated(root: Path) -> dict[str, str]:
    """A home of the test's own: module fixtures run outside the autouse isolation."""
    home = root / "home"
    home.mkdir(exist_ok=True)
    return {"HOME": str(home), "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"), "GIT_CONFIG_NOSYSTEM": "1"}


def _new_project(root: Path) -> Path:
    project = root / "textkit"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return project


def _textkit_fake() -> Any:
    return running_fake_api(default_plan=textkit_plan, summarizer=demo_summarizer)


def _run(project: Path, fake: FakeAPI, spec: Path, *args: str) -> CliResult:
    return run_cli(["run", str(spec), "--agent", "claude-code", "--json", *args], project, fake,
                   timeout=RUN_TIMEOUT, **_isolated(project.parent))


def _checkpoints(project: Path) -> list[str]:
    log = subprocess.run(["git", "-C", str(project), "log", "--format=%s"], capture_output=True, text=True)  # none yet: 128
    found = (re.match(r"orchestrate: ([\w-]+): ", line) for line in reversed(log.stdout.splitlines()))
    return [m.group(1) for m in found if m]


def _attempt_prompts(fake: FakeAPI, feature_id: str) -> list[str]:
    """The feature request of each attempt (the first request of each Claude Code session)."""
    return [turn.request_text for r in fake.agent_requests(feature_id)
            if (turn := agent_turn(r.body)) is not None and turn.step == 0 and r.status == 200]


@dataclass
class DemoBuild:
    """textkit built by `orchestrate demo --agent claude-code`, interrupted once and resumed."""
    project: Path
    fake: FakeAPI  # the demo's own model, served by the demo inside this process
    result: CliResult


@pytest.fixture(scope="module")
def demo_build(tmp_path_factory: pytest.TempPathFactory) -> DemoBuild:
    """One offline demo shared by the tests of the whole build: every assertion about it holds
    across the demo's own Ctrl-C (during case-conversion) and its resume. The demo runs in this
    process (`run_cli`): the model it serves is kept as the demo makes it, to read its requests."""
    root = tmp_path_factory.mktemp("claude-code-demo")
    (root / "cwd").mkdir()
    made: list[FakeAPI] = []

    def kept_demo_model() -> FakeAPI:
        made.append(demo_model())
        return made[-1]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(scripted, "demo_model", kept_demo_model)
        result = run_cli(["demo", "--agent", "claude-code", "--dir", str(root / "demo")], cwd=root / "cwd",
                         key=None, timeout=RUN_TIMEOUT, ANTHROPIC_BASE_URL="http://127.0.0.1:9", **_isolated(root))
    assert len(made) == 1, result.stderr[-3000:]
    return DemoBuild(root / "demo" / "textkit", made[0], result)


def test_the_demo_runs_claude_code_offline(demo_build: DemoBuild) -> None:
    result = demo_build.result
    assert result.code == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert re.search(r"^run passed: 8 passed, 0 failed", result.stdout, re.MULTILINE), result.stdout[-2000:]
    assert "that Ctrl-C was the demo's own" in result.stdout  # interrupted once, and resumed
    assert "answered 400" not in result.stderr  # the fake takes Claude Code's first request as the API does
    assert "orchestrate: warning:" not in result.stderr, result.stderr  # a clean demo warns nothing (issue 43)


def test_all_eight_features_pass_with_the_real_claude_code(demo_build: DemoBuild) -> None:
    project, fake, result = demo_build.project, demo_build.fake, demo_build.result
    assert result.code == 0, result.stderr[-3000:]
    state = read_json(project / STATE)
    assert {fid: f["status"] for fid, f in state["features"].items()} == dict.fromkeys(FEATURES, "passed")
    agent_calls = fake.agent_requests()
    assert agent_calls, "the model was never asked"
    # Every agent call was Claude Code's, with its own tools: the built-in loop never ran.
    assert all(r.headers.get("user-agent", "").startswith("claude-cli/") for r in agent_calls)
    assert all({"Bash", "Read", "Write"} <= {t["name"] for t in r.body["tools"]} for r in agent_calls)
    assert "from textkit.slugify import slugify" in (project / "textkit/__init__.py").read_text()


def test_a_failed_check_is_fed_back_and_the_retry_fixes_it(demo_build: DemoBuild) -> None:
    project, fake = demo_build.project, demo_build.fake
    prompts = _attempt_prompts(fake, "slugify")
    assert len(prompts) == 2
    assert "## Last Verification Result" not in prompts[0]
    assert "## Last Verification Result" in prompts[1] and "test_slugify" in prompts[1]
    assert "unicodedata.normalize" in (project / "textkit/slugify.py").read_text()
    assert read_json(project / STATE)["features"]["slugify"]["attempts"] == 2


def test_the_regression_guard_catches_a_break_and_the_retry_repairs_it(demo_build: DemoBuild) -> None:
    project, fake = demo_build.project, demo_build.fake
    caught = [e for e in read_events(project) if e.get("type") == "regression_check" and e.get("id") == "truncate"
              and e.get("checked") == "package-skeleton" and e.get("success") is False]
    assert caught, "the guard never ran package-skeleton's check against truncate's break"
    prompts = _attempt_prompts(fake, "truncate")
    assert len(prompts) == 2 and "broke feature package-skeleton" in prompts[1]
    assert "dependencies = []" in (project / "pyproject.toml").read_text()


def test_one_checkpoint_commit_per_feature(demo_build: DemoBuild) -> None:
    project = demo_build.project
    assert _checkpoints(project) == FEATURES
    assert subprocess.run(["git", "-C", str(project), "ls-files", ".autonomous"],
                          capture_output=True, text=True, check=True).stdout == ""


def test_the_report_tools_decisions_reach_the_context_agent(demo_build: DemoBuild) -> None:
    project, fake = demo_build.project, demo_build.fake
    decisions = read_json(project / ".autonomous/context/key-decisions.json")["decisions"]
    by_text = {d["text"]: d for d in decisions}
    reported = "slugify strips accents with unicodedata NFKD + ASCII encode"
    assert by_text[reported]["featureId"] == "slugify" and by_text[reported]["source"] == "report"
    constraints = json.dumps(read_json(project / ".autonomous/context/active-constraints.json"))
    assert "pyproject.toml keeps `dependencies = []`" in constraints
    # ...and come back in a later feature's prompt, injected by the Context Agent.
    later = FEATURES[FEATURES.index("slugify") + 1:]
    assert any(reported in json.dumps(r.body) for fid in later for r in fake.agent_requests(fid))


def _passed(project: Path) -> set[str]:
    """What `orchestrate status` says passed (the state file alone lags its journal)."""
    status = run_cli(["status", "--json"], project, None, **_isolated(project.parent))
    assert status.code == 0, status.stderr
    return {fid for fid, f in json.loads(status.stdout)["features"].items() if f.get("status") == "passed"}


def _session_processes(session: int) -> list[int]:
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            fields = Path(f"/proc/{entry}/stat").read_text(errors="replace").rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == session and fields[0] != "Z":
            found.append(int(entry))
    return found


def test_kill_9_mid_run_resumes_with_nothing_redone_or_lost(tmp_path: Path) -> None:
    # The skeleton, then slugify (a failed check and its retry) and word-wrap: killed (-9) once the
    # first checkpoint is made, while a Claude Code session of the next feature is likely running.
    features = FEATURES[:3]
    spec = first_demo_features(tmp_path / "spec", len(features))
    project = _new_project(tmp_path)
    with _textkit_fake() as fake:
        proc = subprocess.Popen(
            orchestrate_command("run", str(spec), "--agent", "claude-code"), cwd=project,
            env=cli_env(fake, **_isolated(tmp_path)), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True,
        )
        deadline = time.monotonic() + RUN_TIMEOUT
        while not _checkpoints(project) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        # The CLI dies with its parent (no orphan Claude Code); a check or commit may finish first.
        quiet_by = time.monotonic() + 30
        while _session_processes(proc.pid) and time.monotonic() < quiet_by:
            time.sleep(0.1)
        orphans = _session_processes(proc.pid)
        passed_before = _passed(project)
        calls_before = dict(fake.feature_calls)
        result = _run(project, fake, spec)

    assert orphans == []
    assert 1 <= len(passed_before) < len(features), passed_before
    assert result.code == 0, result.stderr[-3000:]
    assert _passed(project) == set(features)
    redone = [fid for fid in passed_before if fake.feature_calls[fid] != calls_before.get(fid, 0)]
    assert redone == [], f"passed features sent to the model again: {redone}"
    assert _checkpoints(project) == features  # none lost, none twice
    for fid in features:
        log = read_json(project / f".autonomous/logs/{fid}.json")
        assert log["status"] == "passed" and log["attempts"] >= 1


def test_jobs_3_builds_textkit_with_one_claude_code_per_worktree(tmp_path: Path) -> None:
    # The skeleton, then three features that only need it: three workers at once, each its Claude Code.
    features = FEATURES[:4]
    spec = first_demo_features(tmp_path / "spec", len(features))
    project = _new_project(tmp_path)
    with _textkit_fake() as fake:
        result = _run(project, fake, spec, "--jobs", "3")
        workspaces = {m.group(1) for r in fake.agent_requests()
                      if (m := re.search(r"Primary working directory: (\S+)", json.dumps(r.body["messages"][:2])))}

    assert result.code == 0, result.stderr[-3000:]
    assert _passed(project) == set(features)
    assert sorted(_checkpoints(project)) == sorted(features)
    # Claude Code worked in the features' worktrees, never in the user's tree.
    assert len(workspaces) >= 2 and all("/.autonomous/worktrees/" in w for w in workspaces), workspaces
