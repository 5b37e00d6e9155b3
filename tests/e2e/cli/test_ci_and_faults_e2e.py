"""Built for CI and long unattended runs: exit codes, reports, faults, signals, cost caps, caching."""

from __future__ import annotations

import base64
import json
import random
import signal
import subprocess
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from fake_messages_api.faults import FailFirst, Fault, RandomFaults
from fake_messages_api.scripted_agent.plans import bash, edit_create, report
from orchestrator.llm.conversation import MASK_TEXT
from orchestrator.llm.costs.pricing import PriceTable, TokenUsage
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.state import StateStore
from tests.cli_helpers import cli_env, orchestrate_command, read_json, run_cli, write_spec


def _statuses(project: Path) -> dict[str, str]:
    state = StateStore(ProjectPaths.for_project(project)).load()
    return {fid: entry.status for fid, entry in state.features.items()} if state else {}


def test_twenty_percent_transient_faults_and_every_feature_still_passes(fake_api, project):
    faults = RandomFaults(rate=0.2, kinds=(429, 529, 500), seed=7)
    fake_api.faults = faults
    spec = write_spec(project, 6)

    started = time.monotonic()
    result = run_cli(["run", str(spec)], project, fake_api)
    elapsed = time.monotonic() - started

    assert result.code == 0, result.stderr
    assert set(_statuses(project).values()) == {"passed"}
    assert faults.injected >= 3
    print(f"fault injection: {fake_api.calls} calls, {faults.injected} faults injected, {elapsed:.1f}s")


def test_malformed_bodies_and_dropped_connections_are_retried(fake_api, project):
    kinds = iter([Fault.not_json(), Fault.no_content(), Fault.drop()])
    fake_api.faults = lambda index, request: next(kinds, None)
    spec = write_spec(project, 1)

    result = run_cli(["run", str(spec)], project, fake_api)

    assert result.code == 0, result.stderr


def test_a_slow_server_hits_the_client_timeout_and_the_call_is_retried(fake_api, project):
    fake_api.faults = FailFirst(1, Fault.slow(5))
    spec = write_spec(project, 1)

    result = run_cli(["run", str(spec)], project, fake_api, ORCHESTRATE_API_TIMEOUT="0.5")

    assert result.code == 0, result.stderr
    # The client gave up on the slow reply and sent the same request again; had it waited for
    # the reply, the next request would carry the answer's turn. (No wall-clock bound: those
    # are flaky on a loaded machine.)
    first, second = fake_api.requests[0], fake_api.requests[1]
    assert first.body == second.body


def test_a_refused_key_stops_at_once_with_exit_2(fake_api, project):
    spec = write_spec(project, 3)
    result = run_cli(["run", str(spec)], project, fake_api, key="sk-ant-bad")
    assert result.code == 2
    assert "ANTHROPIC_API_KEY" in result.stderr
    assert "sk-ant-bad" not in result.stderr + result.stdout
    assert fake_api.calls == 1, "authentication errors must not be retried"


def test_a_server_that_is_down_ends_with_exit_3_and_a_later_run_resumes(fake_api, project):
    spec = write_spec(project, 3)
    fake_api.faults = lambda index, request: Fault.drop() if index >= 5 else None  # down after feature 1

    down = run_cli(["run", str(spec)], project, fake_api, ORCHESTRATE_RETRY_ATTEMPTS="2")

    assert down.code == 3, down.stderr
    assert "unreachable" in down.stderr or "kept failing" in down.stderr
    assert _statuses(project)["feat-01"] == "passed"
    fake_api.faults = None
    fake_api.reset()

    resumed = run_cli(["run", str(spec)], project, fake_api)

    assert resumed.code == 0, resumed.stderr
    assert not fake_api.agent_requests("feat-01")
    assert set(_statuses(project).values()) == {"passed"}


def test_sigint_mid_run_exits_130_within_seconds_and_resumes_cleanly(fake_api, project):
    spec = write_spec(project, 3)
    fake_api.faults = lambda index, request: Fault.slow(60) if index == 6 else None
    proc = subprocess.Popen(orchestrate_command("run", str(spec)), cwd=project, env=cli_env(fake_api),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while fake_api.calls < 7 and time.monotonic() < deadline:
        time.sleep(0.02)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=15)
    assert proc.returncode == 130, err
    assert time.monotonic() - sent < 30, "Ctrl-C waited for the 60 s reply"  # generous: the machine may be loaded
    assert "Traceback" not in err
    assert _statuses(project)["feat-01"] == "passed"
    fake_api.faults = None
    fake_api.reset()

    resumed = run_cli(["run", str(spec)], project, fake_api)

    assert resumed.code == 0, resumed.stderr
    assert not fake_api.agent_requests("feat-01")


def test_sigterm_is_handled_like_sigint(fake_api, project):
    spec = write_spec(project, 2)
    fake_api.faults = lambda index, request: Fault.slow(60) if index == 1 else None
    proc = subprocess.Popen(orchestrate_command("run", str(spec)), cwd=project, env=cli_env(fake_api),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while fake_api.calls < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=15)
    assert proc.returncode == 130, err
    assert _statuses(project)["feat-01"] == "in_progress"


def test_sigkill_at_random_points_never_loses_a_passed_feature(fake_api, project):
    spec = write_spec(project, 10)
    rng = random.Random(1234)
    passed_ever: set[str] = set()
    for _ in range(8):
        proc = subprocess.Popen(orchestrate_command("run", str(spec)), cwd=project, env=cli_env(fake_api),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.2, 2.0))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        statuses = _statuses(project)  # must load: never corrupt
        passed_now = {fid for fid, status in statuses.items() if status == "passed"}
        assert passed_ever <= passed_now, f"lost passed features: {passed_ever - passed_now}"
        passed_ever = passed_now
        snapshot = project / ".autonomous/state/execution-state.json"
        if snapshot.exists():  # a kill during start-up may come before the first save
            json.loads(snapshot.read_text())
    fake_api.reset()
    final = run_cli(["run", str(spec)], project, fake_api)
    assert final.code == 0, final.stderr
    for fid in passed_ever:
        assert not fake_api.agent_requests(fid)


# Text whose tokens the fake counts apart from the product's estimate: what the prompts carry in
# each feature's description. The fake bills its own count (`fake_messages_api.billing.api_tokens`), so
# the cap holds only if the product's reservation is a worst case for the API's count, not its own.
_DENSE_RNG = random.Random(45)
CAP_TEXTS = {
    "prose": None,
    "base64": " ".join(base64.b64encode(_DENSE_RNG.randbytes(900)).decode() for _ in range(2)),
    "cjk-large": "".join(chr(_DENSE_RNG.randint(0x4E00, 0x9FFF)) for _ in range(30000)),
}


# cjk-large: 30,000 CJK characters, which the estimator counted one token each until it counted
# their UTF-8 bytes: the run then booked $0.50017 against --max-cost 0.5.
@pytest.mark.parametrize("text", ["prose", "base64", "cjk-large"])
def test_max_cost_stops_before_the_cap_is_passed(fake_api, project, text):
    dense = CAP_TEXTS[text]
    extra = {f"feat-{i:02d}": {"description": f"Build part {i}: {dense}"} for i in range(1, 11)} if dense else None
    spec = write_spec(project, 10, extra=extra)
    cap = 0.5 if text == "cjk-large" else 0.05  # room for a few calls of its size

    result = run_cli(["run", str(spec), "--max-cost", str(cap), "--json"], project, fake_api)

    assert result.code == 3, result.stderr
    assert "cost cap" in result.stderr
    state = read_json(project / ".autonomous/state/execution-state.json")
    assert 0 < state["totals"]["costUsd"] <= cap
    # What the fake billed by its own count, priced independently, is within the cap too.
    billed = fake_api.usage.total
    usage = TokenUsage(input=billed.input_tokens, output=billed.output_tokens,
                       cache_read=billed.cache_read_input_tokens, cache_write=billed.cache_creation_input_tokens)
    assert PriceTable().cost("claude-sonnet-5-5", usage) <= cap
    assert "pending" in set(_statuses(project).values())


def test_json_output_is_only_json_events(fake_api, project):
    spec = write_spec(project, 2)
    result = run_cli(["run", str(spec), "--json"], project, fake_api)
    assert result.code == 0, result.stderr
    events = result.events()  # every line parses
    kinds = [event["type"] for event in events]
    for kind in ("run_started", "feature_started", "tool_call", "verification", "feature_finished",
                 "summarization", "run_finished"):
        assert kind in kinds
    assert kinds[0] == "run_started" and kinds[-1] == "run_finished"


def test_reports_junit_and_github_summary(fake_api, project, tmp_path):
    spec = write_spec(project, 3, extra={"feat-02": {"verify": "exit 1", "max_attempts": 1},
                                         "feat-03": {"depends_on": ["feat-02"]}})
    summary = tmp_path / "summary.md"
    result = run_cli(["run", str(spec), "--report", str(tmp_path / "r.json"), "--junit", str(tmp_path / "j.xml")],
                     project, fake_api, GITHUB_STEP_SUMMARY=str(summary))
    assert result.code == 1
    report = read_json(tmp_path / "r.json")
    assert [f["status"] for f in report["features"]] == ["passed", "failed", "blocked"]
    tokens = report["features"][0]["tokens"]  # the prefix may be served from the cache: input is any of them
    assert report["totals"]["costUsd"] > 0 and tokens["input"] + tokens["cacheRead"] + tokens["cacheWrite"] > 0
    suite = ET.parse(tmp_path / "j.xml").getroot().find("testsuite")
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert set(cases) == {"feat-01", "feat-02", "feat-03"}
    assert cases["feat-02"].find("failure") is not None
    assert cases["feat-03"].find("skipped") is not None
    assert "| `feat-02` | failed |" in summary.read_text()


def test_shards_cover_every_feature_exactly_once(project):
    extra = {"feat-03": {"depends_on": ["feat-01"]}, "feat-07": {"depends_on": ["feat-03"]},
             "feat-05": {"depends_on": ["feat-04"]}}
    spec = write_spec(project, 9, extra=extra)
    seen: list[str] = []
    for index in (1, 2, 3):
        result = run_cli(["run", str(spec), "--dry-run", "--shard", f"{index}/3"], project, None, key=None)
        assert result.code == 0, result.stderr
        ids = [line.split(": ", 1)[1] for line in result.stdout.splitlines() if line.startswith("ID: ")]
        if "feat-01" in ids:
            assert {"feat-03", "feat-07"} <= set(ids), "a dependency chain was split"
        seen += ids
    assert sorted(seen) == [f"feat-{i:02d}" for i in range(1, 10)]
    assert run_cli(["run", str(spec), "--shard", "4/3", "--dry-run"], project, None, key=None).code == 2


def test_only_runs_the_named_features(fake_api, project):
    spec = write_spec(project, 4)
    result = run_cli(["run", str(spec), "--only", "feat-02,feat-04"], project, fake_api)
    assert result.code == 0, result.stderr
    assert fake_api.agent_requests("feat-02") and not fake_api.agent_requests("feat-01")
    assert run_cli(["run", str(spec), "--only", "nope"], project, fake_api).code == 2


def test_reset_redoes_a_passed_feature(fake_api, project):
    spec = write_spec(project, 2)
    assert run_cli(["run", str(spec)], project, fake_api).code == 0
    fake_api.reset()
    assert run_cli(["run", str(spec), "--reset", "feat-02"], project, fake_api).code == 0
    assert fake_api.agent_requests("feat-02") and not fake_api.agent_requests("feat-01")


def test_cache_reads_dominate_a_ten_turn_feature(fake_api, project):
    (project / "notes.txt").write_text("\n".join(f"line {i}: some project notes to read" for i in range(400)))
    steps = [[bash("cat notes.txt")] for _ in range(8)] + [[edit_create("features/feat-01.txt", "done\n")],
                                                            [report("read the notes ten times")]]
    fake_api.plans["feat-01"] = steps
    spec = write_spec(project, 1)

    result = run_cli(["run", str(spec)], project, fake_api)

    assert result.code == 0, result.stderr
    agent = fake_api.usage.agent
    assert agent.calls == 10
    print(f"cache read share over a 10-turn feature: {agent.cache_read_share:.1%}")
    assert agent.cache_read_share > 0.6
    log = read_json(project / ".autonomous/logs/feat-01.json")
    assert log["tokens"]["cacheRead"] == agent.cache_read_input_tokens

    # Eight outputs of ~4900 tokens pass the 30,000-token masking threshold once, at the ninth
    # call: the oldest are masked down to half the threshold (five of them), the newest kept.
    def results(request):
        blocks = [block["content"] for message in request.body["messages"] if isinstance(message["content"], list)
                  for block in message["content"] if block.get("type") == "tool_result"]
        return [b if isinstance(b, str) else "".join(part.get("text", "") for part in b) for b in blocks]

    placeholder = MASK_TEXT.format(tool="bash")
    requests = fake_api.agent_requests("feat-01")
    assert placeholder not in results(requests[7])
    ninth, tenth = results(requests[8]), results(requests[9])
    masked = ninth.count(placeholder)
    assert masked == 5 and ninth[:masked] == [placeholder] * masked
    assert all("line 399" in r for r in ninth[masked:])
    assert tenth[:8] == ninth  # masked once, then the prefix holds
    assert log["attemptHistory"][0]["maskedOutputs"] == masked
