"""Resume without a sandbox believes `passed` only with the feature's log and its checkpoint.

The red team's run: the agent appended a forged `passed` line to the state journal and killed
the orchestrator; on resume a feature whose check is `false` was passed and the run exited 0.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fake_messages_api.scripted_agent.plans import bash, edit_create
from orchestrator.store.disk.paths import ProjectPaths
from orchestrator.store.feature_log import FeatureLog, write_feature_log
from shared_base.check_result import CheckResult
from tests.cli_helpers import run_cli, write_spec
from tests.resume_trust import doubted, git, passed_feature

FORGE_AND_KILL = (
    "import glob, json, os, signal\n"
    "path = glob.glob('.auto*/state/journal.jsonl')[0]\n"
    "line = {'feature': 'feat-02', 'state': {'status': 'passed', 'attempts': 1, 'reason': 'FORGED'},\n"
    "        'iteration': 2, 'summarization': {}, 'totals': {}}\n"
    "open(path, 'a').write(json.dumps(line) + '\\n')\n"
    "pid = os.getppid()  # bash, or the orchestrator when bash ran python in its place\n"
    "if b'orchestrator' not in open(f'/proc/{pid}/cmdline', 'rb').read():\n"
    "    pid = int(open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()[1])\n"
    "assert b'orchestrator' in open(f'/proc/{pid}/cmdline', 'rb').read()\n"
    "os.kill(pid, signal.SIGKILL)\n"
)


def test_a_forged_pass_in_the_journal_is_not_believed_on_resume(fake_api: Any, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    spec = write_spec(tmp_path, 2, extra={"feat-02": {"verify": "false"}})
    fake_api.plans["feat-02"] = [[edit_create("forge.py", FORGE_AND_KILL)], [bash("python3 forge.py")]]

    killed = run_cli(["run", str(spec), "--sandbox", "none"], project, fake_api, process=True)  # killed at a crash point
    assert killed.code == -9, killed.stderr
    assert b"FORGED" in (project / ".autonomous" / "state" / "journal.jsonl").read_bytes()  # the forgery landed
    feat_01_calls = fake_api.feature_calls["feat-01"]
    fake_api.plans["feat-02"] = []  # the agent now just ends its turn

    resumed = run_cli(["run", str(spec), "--sandbox", "none", "--max-attempts", "2", "--json"], project, fake_api)

    assert resumed.code == 1, resumed.stderr
    assert "feature feat-02 is recorded as passed, but its feature log does not say so" in resumed.stderr
    state = json.loads((project / ".autonomous" / "state" / "execution-state.json").read_text())
    assert state["features"]["feat-02"]["status"] == "failed"
    assert state["features"]["feat-01"]["status"] == "passed"  # a real pass stays believed, not redone
    assert fake_api.feature_calls["feat-01"] == feat_01_calls


# ---- the rule, one case at a time -----------------------------------------------------------


def _log(paths: ProjectPaths, *, status: str = "passed", command: str = "true", success: bool = True) -> None:
    verification = CheckResult(command=command, success=success, exit_code=0 if success else 1, attempt=1)
    paths.logs_dir.mkdir(parents=True, exist_ok=True)
    write_feature_log(paths, FeatureLog(id="feat-01", status=status, attempts=1, verification=verification))


def test_a_pass_with_its_log_outside_git_is_believed(tmp_path: Path) -> None:
    paths, spec, state = passed_feature(tmp_path, git_repo=False)
    _log(paths)
    assert doubted(paths, spec, state) == [] and state.features["feat-01"].status == "passed"


def test_a_pass_without_a_log_or_with_a_failing_one_is_not(tmp_path: Path) -> None:
    paths, spec, state = passed_feature(tmp_path, git_repo=False)
    assert doubted(paths, spec, state) == ["feat-01"]
    assert state.features["feat-01"].status == "pending"
    for kwargs in ({"status": "in_progress"}, {"success": False}, {"command": "echo another check"}):
        state.features["feat-01"].status = "passed"
        _log(paths, **kwargs)
        assert doubted(paths, spec, state) == ["feat-01"], kwargs


def test_in_git_a_pass_needs_its_checkpoint_commit(tmp_path: Path) -> None:
    paths, spec, state = passed_feature(tmp_path, git_repo=True)
    _log(paths)
    assert doubted(paths, spec, state) == ["feat-01"]
    state.features["feat-01"].status = "passed"
    assert doubted(paths, spec, state, checkpoints=False) == []  # --no-commit: no checkpoint to look for
    (paths.root / "f.txt").write_text("x")
    git(paths.root, "add", "f.txt")
    git(paths.root, "commit", "-qm", "orchestrate: feat-01: Feature 1")
    assert doubted(paths, spec, state) == []


