"""`orchestrate run --jobs N` end to end: the real CLI, the fake API, real git worktrees.

Wall-clock figures are in bench/parallel.py, not here: these tests check results, order and
what is left behind, never timing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from fake_messages_api.scripted_agent.plans import bash, report
from tests.cli_helpers import cli_env, orchestrate_command, run_cli, write_spec


def _trouble(result: Any) -> str:
    """What went wrong in a run, for an assertion's message."""
    kinds = ("merge", "verification", "feature_finished", "warning", "error")
    try:
        events = [e for e in result.events() if e["type"] in kinds and e.get("result", "") != "merged"
                  and e.get("success", False) is not True and e.get("status") != "passed"]
    except ValueError:
        events = []
    return result.stderr + "\n" + "\n".join(json.dumps(e)[:800] for e in events)


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def _checkpoints(root: Path) -> list[str]:
    """Feature ids of the checkpoint commits on the user's branch, oldest first."""
    subjects = _git(root, "log", "--reverse", "--format=%s").splitlines()
    return [s.split(": ")[1] for s in subjects if s.startswith("orchestrate: ") and s.count(": ") >= 2]


def _assert_nothing_left(root: Path) -> None:
    worktrees = [line for line in _git(root, "worktree", "list", "--porcelain").splitlines() if line.startswith("worktree ")]
    assert worktrees == [f"worktree {root}"]
    assert _git(root, "branch", "--list", "orchestrate/work/*").strip() == ""
    assert not any((root / ".autonomous" / "worktrees").glob("*"))


def _statuses(root: Path) -> dict[str, str]:
    state = json.loads((root / ".autonomous" / "state" / "execution-state.json").read_text())
    return {fid: entry["status"] for fid, entry in state["features"].items()}


def test_independent_features_run_at_once_with_the_results_of_one_at_a_time(tmp_path: Path, fake_api: Any) -> None:
    spec = write_spec(tmp_path, 12)
    root = tmp_path / "project"  # a new directory: --jobs makes it a repository
    result = run_cli(["run", str(spec), "-j", "4", "--json", "--project-dir", str(root)], cwd=tmp_path, fake=fake_api)
    assert result.code == 0, _trouble(result)
    ids = [f"feat-{i:02d}" for i in range(1, 13)]
    assert _statuses(root) == {fid: "passed" for fid in ids}
    assert sorted(_checkpoints(root)) == ids  # exactly one checkpoint per feature
    for fid in ids:
        assert (root / "features" / f"{fid}.txt").read_text() == "done\n"
    assert _git(root, "status", "--porcelain").strip() == ""  # the checkout is the branch head
    events = result.events()
    merges = [e for e in events if e["type"] == "merge"]
    assert sorted(e["id"] for e in merges if e["result"] == "merged") == ids
    # Every event of a feature names it, so interleaved output can be told apart.
    for event in events:
        if event["type"] in ("feature_started", "api_call", "tool_call", "verification", "merge", "checkpoint"):
            assert event.get("id") in ids, event
    assert max(_busy_at_once(events)) > 1  # they really ran at once
    assert fake_api.feature_calls == {fid: 3 for fid in ids}  # the same calls as one at a time
    _assert_nothing_left(root)


def _busy_at_once(events: list[dict[str, Any]]) -> list[int]:
    busy: set[str] = set()
    counts = []
    for event in events:
        if event["type"] == "feature_started":
            busy.add(event["id"])
        elif event["type"] == "feature_finished":
            busy.discard(event["id"])
        counts.append(len(busy))
    return counts


def _appending_plan(line: str) -> list[list[dict[str, Any]]]:
    return [[bash(f"echo '{line}' >> shared.txt")], [report(f"appended {line}")]]


def test_six_features_appending_to_one_file_all_land(tmp_path: Path, fake_api: Any) -> None:
    root = tmp_path / "project"
    root.mkdir()
    # The check spells the file's name at run time: a file a check names is protected from the agent.
    checks = {f"feat-{i:02d}": {"verify": f"grep -qx 'line {i}' \"$(echo share)d.txt\"", "max_attempts": 6}
              for i in range(1, 7)}
    spec = write_spec(tmp_path, 6, extra=checks)
    for i in range(1, 7):
        fake_api.plans[f"feat-{i:02d}"] = _appending_plan(f"line {i}")
    result = run_cli(["run", str(spec), "--jobs", "3", "--json"], cwd=root, fake=fake_api)
    assert result.code == 0, _trouble(result)
    lines = (root / "shared.txt").read_text().splitlines()
    assert sorted(lines) == [f"line {i}" for i in range(1, 7)]
    for fid, check in checks.items():  # every check passes on the final tree
        assert subprocess.run(check["verify"], shell=True, cwd=root).returncode == 0, fid
    merges = [e for e in result.events() if e["type"] == "merge"]
    for event in merges:
        if event["result"] == "conflict":
            assert event["files"] == ["shared.txt"]
    # A conflict is fed back to the next attempt as its Last Verification Result.
    conflicted = {e["id"] for e in merges if e["result"] == "conflict"}
    for fid in conflicted:
        prompts = [r for r in fake_api.agent_requests(fid) if len(r.body["messages"]) == 1]
        assert "merge conflict" in json.dumps(prompts[-1].body["messages"][0]["content"])
    assert sorted(_checkpoints(root)) == sorted(checks)
    _assert_nothing_left(root)


def test_a_chain_link_starts_only_after_its_predecessor_is_merged(tmp_path: Path, fake_api: Any) -> None:
    root = tmp_path / "project"
    root.mkdir()
    spec = write_spec(tmp_path, 6, extra={"feat-02": {"depends_on": ["feat-01"]}, "feat-03": {"depends_on": ["feat-02"]}})
    result = run_cli(["run", str(spec), "--jobs", "3", "--json"], cwd=root, fake=fake_api)
    assert result.code == 0, _trouble(result)
    events = result.events()
    for before, after in (("feat-01", "feat-02"), ("feat-02", "feat-03")):
        merged = next(i for i, e in enumerate(events) if e["type"] == "merge" and e["id"] == before)
        started = next(i for i, e in enumerate(events) if e["type"] == "feature_started" and e["id"] == after)
        assert events[merged]["result"] == "merged"
        assert merged < started
    assert max(_busy_at_once(events)) > 1
    _assert_nothing_left(root)


def test_kill_9_mid_run_then_resume_redoes_nothing_merged(tmp_path: Path, fake_api: Any) -> None:
    root = tmp_path / "project"
    root.mkdir()
    spec = write_spec(tmp_path, 8)
    fake_api.latency = 0.2
    proc = subprocess.Popen(orchestrate_command("run", str(spec), "--jobs", "4"), cwd=root, env=cli_env(fake_api),
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            log = subprocess.run(["git", "log", "--format=%s"], cwd=root, capture_output=True, text=True)
            if sum(line.count(": ") >= 2 for line in log.stdout.splitlines()) >= 3:  # ~40%
                break
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    merged = set(_checkpoints(root))
    assert len(merged) >= 3
    calls_before = dict(fake_api.feature_calls)
    fake_api.latency = 0.0
    result = run_cli(["run", str(spec), "--jobs", "4"], cwd=root, fake=fake_api)
    assert result.code == 0, _trouble(result)
    for fid in merged:  # never sent to the model again
        assert fake_api.feature_calls[fid] == calls_before[fid], fid
    ids = [f"feat-{i:02d}" for i in range(1, 9)]
    assert sorted(_checkpoints(root)) == ids
    assert _statuses(root) == {fid: "passed" for fid in ids}
    _assert_nothing_left(root)


def test_jobs_in_a_directory_that_is_not_a_repository_stops_with_exit_2(tmp_path: Path, fake_api: Any) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "notes.txt").write_text("mine\n")
    spec = write_spec(tmp_path, 2)
    result = run_cli(["run", str(spec), "--jobs", "2"], cwd=root, fake=fake_api)
    assert result.code == 2
    assert "git init" in result.stderr and "not empty" in result.stderr
    assert not (root / ".git").exists()
    assert fake_api.calls == 0


def test_plain_output_tags_each_line_with_its_feature(tmp_path: Path, fake_api: Any) -> None:
    root = tmp_path / "project"
    spec = write_spec(tmp_path, 3)
    result = run_cli(["run", str(spec), "--jobs", "2", "--project-dir", str(root)], cwd=tmp_path, fake=fake_api,
                     ORCHESTRATE_JOBS="1")  # the flag wins over the environment
    assert result.code == 0, _trouble(result)
    assert "[feat-01] feat-01 PASSED" in result.stdout
    assert "[feat-02] merge merged" in result.stdout


def test_jobs_from_the_environment(tmp_path: Path, fake_api: Any) -> None:
    root = tmp_path / "project"
    spec = write_spec(tmp_path, 2)
    result = run_cli(["run", str(spec), "--json", "--project-dir", str(root)], cwd=tmp_path, fake=fake_api,
                     ORCHESTRATE_JOBS="2")
    assert result.code == 0, _trouble(result)
    assert [e["result"] for e in result.events() if e["type"] == "merge"] == ["merged", "merged"]


def test_ctrl_c_stops_every_worker_and_the_run_resumes(tmp_path: Path, fake_api: Any) -> None:
    root = tmp_path / "project"
    root.mkdir()
    spec = write_spec(tmp_path, 6)
    fake_api.latency = 0.5
    proc = subprocess.Popen(orchestrate_command("run", str(spec), "--jobs", "3"), cwd=root, env=cli_env(fake_api),
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    events = root / ".autonomous" / "events.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (events.exists() and events.read_text().count('"api_call"') >= 2):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=20)  # every worker stops within the grace period
    assert proc.returncode == 130, stderr
    fake_api.latency = 0.0
    result = run_cli(["run", str(spec), "--jobs", "3"], cwd=root, fake=fake_api)
    assert result.code == 0, _trouble(result)
    assert sorted(_checkpoints(root)) == [f"feat-{i:02d}" for i in range(1, 7)]
    _assert_nothing_left(root)
