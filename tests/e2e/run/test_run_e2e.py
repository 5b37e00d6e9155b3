"""The main job end to end, through the CLI, against the fake Messages API."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from fake_messages_api.scripted_agent.plans import edit_create, report, text
from tests.cli_helpers import (
    cli_env,
    first_prompt,
    orchestrate_command,
    plain_summarizer,
    read_json,
    run_cli,
    write_spec,
)

ANSI = re.compile(r"\x1b\[")


def test_twelve_features_build_verify_log_and_summarize(fake_api, project):
    fake_api.summarizer = plain_summarizer
    spec = write_spec(project, 12)

    result = run_cli(["run", str(spec)], project, fake_api)

    assert result.code == 0, result.stderr
    state = read_json(project / ".autonomous/state/execution-state.json")
    for index in range(1, 13):
        fid = f"feat-{index:02d}"
        assert state["features"][fid]["status"] == "passed"
        log = read_json(project / f".autonomous/logs/{fid}.json")
        for key in ("id", "name", "category", "status", "startedAt", "completedAt", "iteration", "attempts",
                    "verification", "tokens", "costUsd", "durationMs", "model", "report"):
            assert key in log, f"{fid} log lacks {key}"
        assert log["status"] == "passed" and log["verification"]["success"] is True
        assert log["tokens"]["cacheRead"] >= 0 and log["startedAt"] <= log["completedAt"]
        assert log["report"]["summary"] == f"Implemented {fid}"
    # Summarizer: after 5, after 10, and once at the end for the last two.
    summaries = [r for r in fake_api.requests if r.kind == "summarizer"]
    assert len(summaries) == 3
    events = [json.loads(line) for line in (project / ".autonomous/events.jsonl").read_text().splitlines()]
    triggers = [(e["trigger"], len(e["features"])) for e in events if e["type"] == "summarization"]
    assert triggers == [("every-5", 5), ("every-5", 5), ("end", 2)]
    for index in range(6, 13):
        assert "## Project Context" in first_prompt(fake_api, f"feat-{index:02d}")
    assert "## Project Context" not in first_prompt(fake_api, "feat-01")
    assert "12 passed" in result.stdout


def test_failed_check_is_fed_back_and_the_retry_passes(fake_api, project):
    (project / "check_value.sh").write_text(
        'test "$(cat value.txt 2>/dev/null)" = 42 || { echo "expected value 42 in value.txt"; exit 1; }\n'
    )
    verify = "sh check_value.sh"

    def plan(turn):
        feedback = turn.last_verification
        value = "42" if feedback and "expected value 42" in feedback["output"] else "7"
        steps = [[edit_create("value.txt", value + "\n")], [report("wrote the value")], [text("done")]]
        return steps[min(turn.step, 2)]

    fake_api.plans["feat-01"] = plan
    spec = write_spec(project, 1, verify=verify)

    result = run_cli(["run", str(spec)], project, fake_api)

    assert result.code == 0, result.stderr
    assert "## Last Verification Result" not in first_prompt(fake_api, "feat-01", 0)
    retry = first_prompt(fake_api, "feat-01", 1)
    assert retry.startswith("## Last Verification Result")
    fields = retry.split("```json\n", 1)[1].split("\n```", 1)[0]
    fed_back = json.loads(fields)
    assert "\n" not in fields  # the command, the exit code and the rest on one line
    assert list(fed_back) == ["command", "success", "exitCode", "error", "skipped", "attempt"]
    assert "```text\nexpected value 42 in value.txt\n```" in retry  # the output as plain text, not escaped JSON
    assert fed_back["success"] is False and fed_back["exitCode"] == 1 and fed_back["attempt"] == 1
    log = read_json(project / ".autonomous/logs/feat-01.json")
    assert log["attempts"] == 2 and log["status"] == "passed"
    failures = read_json(project / ".autonomous/context/failure-memory.json")["failures"]
    assert failures and failures[0]["featureId"] == "feat-01" and failures[0]["prevention"]


def test_a_feature_that_never_passes_fails_and_blocks_its_dependents(fake_api, project):
    spec = write_spec(
        project, 3, extra={"feat-01": {"verify": "echo nope; exit 3", "max_attempts": 2},
                           "feat-02": {"depends_on": ["feat-01"]}},
    )

    result = run_cli(["run", str(spec)], project, fake_api)

    assert result.code == 1
    state = read_json(project / ".autonomous/state/execution-state.json")["features"]
    assert state["feat-01"]["status"] == "failed" and state["feat-01"]["attempts"] == 2
    assert state["feat-02"]["status"] == "blocked"
    assert state["feat-03"]["status"] == "passed"
    assert not fake_api.agent_requests("feat-02")


def _passed_logs(project: Path) -> set[str]:
    passed = set()
    for path in (project / ".autonomous/logs").glob("*.json"):
        try:
            if json.loads(path.read_text())["status"] == "passed":
                passed.add(path.stem)
        except (ValueError, KeyError):
            pass
    return passed


def test_a_killed_run_resumes_without_redoing_passed_features(fake_api, project):
    spec = write_spec(project, 8)
    proc = subprocess.Popen(
        orchestrate_command("run", str(spec)), cwd=project, env=cli_env(fake_api),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while len(_passed_logs(project)) < 3 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    passed_before = _passed_logs(project)
    assert 3 <= len(passed_before) < 8, "the kill should land mid-run"
    fake_api.reset()

    result = run_cli(["run", str(spec)], project, fake_api)

    assert result.code == 0, result.stderr
    for fid in passed_before:
        assert not fake_api.agent_requests(fid), f"{fid} passed before the kill but was sent again"
    state = read_json(project / ".autonomous/state/execution-state.json")["features"]
    assert all(entry["status"] == "passed" for entry in state.values())
    assert "stale lock" in result.stderr or "taking over" in result.stderr


@pytest.mark.parametrize(
    "content, message",
    [
        (b"{not json", "not valid JSON"),
        (b"\xff\xfe\x00garbage", "UTF-8"),
        (json.dumps({"features": [{"id": "a", "name": 3, "description": "x"}]}).encode(), "features[0].name"),
        (json.dumps({"features": [{"id": "a", "description": "x"}]}).encode(), "features[0].name"),
        (json.dumps({"features": [{"id": "a", "name": "A", "description": "x"},
                                  {"id": "a", "name": "B", "description": "y"}]}).encode(), 'duplicate id "a"'),
        (json.dumps({"features": [{"id": "../up", "name": "A", "description": "x"}]}).encode(), "features[0].id"),
        (json.dumps({"features": [{"id": "a", "name": "A", "description": "x", "depends_on": ["zz"]}]}).encode(),
         'unknown id "zz"'),
        (json.dumps({"features": [{"id": "a", "name": "A", "description": "x", "depends_on": ["b"]},
                                  {"id": "b", "name": "B", "description": "y", "depends_on": ["a"]}]}).encode(),
         "cycle"),
        (json.dumps({"features": []}).encode(), "features"),
    ],
)
def test_bad_specs_exit_2_with_a_located_message_and_write_nothing(project, content, message):
    spec = project / "spec.json"
    spec.write_bytes(content)

    result = run_cli(["run", str(spec)], project, None)

    assert result.code == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert not (project / ".autonomous").exists()


def test_unknown_keys_are_warnings_not_errors(project):
    spec = write_spec(project, 1, colour="blue")
    result = run_cli(["validate", str(spec)], project, None)
    assert result.code == 0
    assert "colour" in result.stderr


def test_missing_key_is_a_one_line_error_naming_the_variable(project):
    spec = write_spec(project, 1)
    result = run_cli(["run", str(spec)], project, None, key=None)
    assert result.code == 2
    assert "ANTHROPIC_API_KEY" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (project / ".autonomous").exists()


def test_dry_run_needs_no_key_and_changes_nothing(project):
    spec = write_spec(project, 3)
    before = sorted(p.name for p in project.iterdir())

    result = run_cli(["run", str(spec), "--dry-run"], project, None, key=None)

    assert result.code == 0, result.stderr
    assert result.stdout.count("## Feature") == 3
    assert "ID: feat-02" in result.stdout
    assert sorted(p.name for p in project.iterdir()) == before


def test_plain_output_has_no_ansi_codes(fake_api, project):
    spec = write_spec(project, 2)
    result = run_cli(["run", str(spec), "-v"], project, fake_api, TERM="xterm-256color")
    assert result.code == 0, result.stderr
    assert not ANSI.search(result.stdout + result.stderr)
    assert "feat-02" in result.stdout


def test_status_and_logs_commands_read_the_saved_run(fake_api, project):
    spec = write_spec(project, 2)
    assert run_cli(["run", str(spec)], project, fake_api).code == 0

    status = run_cli(["status", "--json"], project, None)
    assert status.code == 0
    assert json.loads(status.stdout)["features"]["feat-01"]["status"] == "passed"
    table = run_cli(["status"], project, None)
    assert "feat-02" in table.stdout and "passed" in table.stdout
    one_log = run_cli(["logs", "feat-01", "--json"], project, None)
    assert json.loads(one_log.stdout)["id"] == "feat-01"
    assert run_cli(["logs", "nope"], project, None).code == 2


def test_version_and_help(project):
    assert run_cli(["--version"], project, None).stdout.startswith("orchestrate ")
    for command in ([], ["run"], ["validate"], ["status"], ["context"], ["summarize"], ["logs"]):
        result = run_cli([*command, "--help"], project, None)
        assert result.code == 0 and "Usage" in result.stdout


def test_fresh_moves_the_old_state_aside(fake_api, project):
    spec = write_spec(project, 1)
    assert run_cli(["run", str(spec)], project, fake_api).code == 0
    fake_api.reset()

    result = run_cli(["run", str(spec), "--fresh"], project, fake_api)

    assert result.code == 0
    assert fake_api.agent_requests("feat-01"), "--fresh must redo passed features"
    backups = list(project.glob(".autonomous.bak-*"))
    assert len(backups) == 1 and (backups[0] / "logs/feat-01.json").exists()


def test_a_second_run_on_the_same_project_is_refused(fake_api, project):
    spec = write_spec(project, 1)
    lock = project / ".autonomous/state/run.lock"
    lock.parent.mkdir(parents=True)
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        lock.write_text(json.dumps({"pid": sleeper.pid, "host": __import__("socket").gethostname(),
                                    "startedAt": int(time.time() * 1000)}))
        result = run_cli(["run", str(spec)], project, fake_api)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert result.code == 2
    assert str(sleeper.pid) in result.stderr


def test_git_projects_get_a_checkpoint_commit_per_passed_feature(fake_api, project):
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    spec = write_spec(project, 2)

    assert run_cli(["run", str(spec)], project, fake_api).code == 0

    log = subprocess.run(["git", "log", "--format=%s"], cwd=project, capture_output=True, text=True).stdout
    assert "feat-01" in log and "feat-02" in log
    tracked = subprocess.run(["git", "ls-files"], cwd=project, capture_output=True, text=True).stdout
    assert "features/feat-01.txt" in tracked and ".autonomous" not in tracked
