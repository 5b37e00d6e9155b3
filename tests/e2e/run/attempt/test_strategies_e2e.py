"""Context strategies through the CLI: working-memory log, replay, window."""

from __future__ import annotations

import json
import signal
import subprocess
import time

from fake_messages_api.faults import Fault
from tests.cli_helpers import cli_env, first_prompt, orchestrate_command, read_json, run_cli, write_spec


def _text(message: dict) -> str:
    content = message["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def _first_request(fake, feature_id: str) -> dict:
    return fake.agent_requests(feature_id)[0].body


def test_working_memory_log_records_every_kind_in_every_strategy(fake_api, project):
    spec = write_spec(project, 5)
    assert run_cli(["run", str(spec), "--context", "window"], project, fake_api).code == 0
    lines = (project / ".autonomous/memory/working-memory.jsonl").read_text().splitlines()
    entries = [json.loads(line) for line in lines]
    assert {e["type"] for e in entries} == {"text_input", "text_output", "wm_event", "wm_insight"}
    assert all(isinstance(e["ts_ms"], int) for e in entries)
    assert [e["ts_ms"] for e in entries] == sorted(e["ts_ms"] for e in entries)
    events = {e.get("event") for e in entries if e["type"] == "wm_event"}
    assert {"tool_call", "verification", "status"} <= events


def test_replay_puts_the_log_into_messages_and_counts_what_it_skips(fake_api, project):
    log = project / ".autonomous/memory/working-memory.jsonl"
    log.parent.mkdir(parents=True)
    good = [
        {"type": "text_output", "ts_ms": 300, "text": "I built the parser."},
        {"type": "text_input", "ts_ms": 100, "text": "Build the parser."},
        {"type": "wm_event", "ts_ms": 200, "event": "tool_call", "tool": "bash"},
    ]
    lines = [json.dumps(good[0]), "this is not json {", json.dumps({"ts_ms": 250, "text": "no type"}),
             json.dumps(good[1]), json.dumps({"type": "wm_event", "ts_ms": "late"}), json.dumps(good[2])]
    log.write_text("\n".join(lines) + "\n")
    spec = write_spec(project, 1)

    result = run_cli(["run", str(spec), "--context", "replay"], project, fake_api)

    assert result.code == 0, result.stderr
    request = _first_request(fake_api, "feat-01")
    messages = request["messages"]
    history, current = messages[:-1], messages[-1]
    assert [m["role"] for m in history] == ["user", "user", "assistant"]
    assert [json.loads(_text(m).splitlines()[2][len("WM_JSON: "):])["ts_ms"] for m in history] == [100, 200, 300]
    for message in history:
        kind, ts, payload = _text(message).split("\n")
        entry = json.loads(payload[len("WM_JSON: "):])
        assert kind == f"WM_KIND={entry['type']}" and ts == f"ts_ms: {entry['ts_ms']}"
    assert _text(current).startswith("CURRENT_FEATURE_REQUEST")
    assert "feat-01" in _text(current).splitlines()[0]
    assert sum(_text(m).startswith("CURRENT_FEATURE_REQUEST") for m in messages) == 1
    assert "WM_KIND=" in "".join(block["text"] for block in request["system"])
    stats = read_json(project / ".autonomous/logs/feat-01.json")["replay"]
    assert stats == {"total_lines": 6, "parsed_entries": 3, "skipped_invalid_json": 1, "skipped_invalid_shape": 2}


def test_replay_with_no_log_sends_only_the_request(fake_api, project):
    spec = write_spec(project, 2)
    assert run_cli(["run", str(spec), "--context", "replay"], project, fake_api).code == 0
    first = _first_request(fake_api, "feat-01")["messages"]
    assert len(first) == 1 and _text(first[0]).startswith("CURRENT_FEATURE_REQUEST")
    second = _first_request(fake_api, "feat-02")["messages"]
    assert len(second) > 1 and _text(second[0]).startswith("WM_KIND=")
    assert "## Project Context" not in _text(second[-1])


def test_window_shows_exactly_the_last_n_features(fake_api, project):
    spec = write_spec(project, 8)
    assert run_cli(["run", str(spec), "--context", "window", "--context-depth", "3"], project, fake_api).code == 0
    assert "<feature-history>" not in first_prompt(fake_api, "feat-01")
    eighth = first_prompt(fake_api, "feat-08")
    history = eighth.split("<feature-history>", 1)[1].split("</feature-history>", 1)[0]
    assert [f"feat-0{i}" in history for i in range(1, 8)] == [False] * 4 + [True] * 3
    assert history.index("feat-05") < history.index("feat-06") < history.index("feat-07")
    assert "<request>" in history and "<outcome>" in history
    assert "## Project Context" not in eighth


def test_a_resumed_feature_is_shown_as_pending(fake_api, project):
    spec = write_spec(project, 2)
    # The default plan makes 3 calls a feature: call 4 is feat-02's second step.
    fake_api.faults = lambda index, request: Fault.slow(60) if index == 4 else None
    proc = subprocess.Popen(orchestrate_command("run", str(spec), "--context", "window"), cwd=project,
                            env=cli_env(fake_api), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while fake_api.calls < 5 and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=15) == 130
    fake_api.faults = None
    fake_api.reset()

    assert run_cli(["run", str(spec), "--context", "window"], project, fake_api).code == 0

    prompt = first_prompt(fake_api, "feat-02")
    assert '<pending-feature id="feat-02" status="awaiting completion">' in prompt
    assert "<feature-history>" in prompt and "feat-01" in prompt


def test_retry_section_comes_first_in_every_strategy(fake_api, project):
    for strategy in ("compressed", "replay", "window"):
        root = project / strategy
        root.mkdir()
        spec = write_spec(root, 1, verify="test -f second-try || { touch second-try; exit 1; }")
        fake_api.reset()
        assert run_cli(["run", str(spec), "--context", strategy], root, fake_api).code == 0
        retry_start = next(r for r in fake_api.agent_requests("feat-01") if "## Last Verification Result" in
                       _text(r.body["messages"][-1]))
        text = _text(retry_start.body["messages"][-1])
        body = text.split("\n", 1)[1] if text.startswith("CURRENT_FEATURE_REQUEST") else text
        assert body.lstrip().startswith("## Last Verification Result"), strategy


def test_context_command_compares_strategies(fake_api, project):
    spec = write_spec(project, 3)
    assert run_cli(["run", str(spec), "--only", "feat-01,feat-02"], project, fake_api).code == 0
    result = run_cli(["context", "feat-03", "--strategy", "all"], project, None, key=None)
    assert result.code == 0, result.stderr
    for name in ("compressed", "replay", "window"):
        assert f"=== {name}: feature feat-03 ===" in result.stdout
    assert result.stdout.count("tokenCount:") == 3
    assert "## Project Context" in result.stdout and "<feature-history>" in result.stdout
