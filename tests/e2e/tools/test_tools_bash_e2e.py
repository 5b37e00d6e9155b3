"""The bash tool: runs in the project, without secrets, within its time and output limits."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from orchestrator.safety.credentials.secrets import scrubbed_environment
from orchestrator.safety.processes import process_group
from orchestrator.tools.context import ToolContext
from orchestrator.tools.dispatch import execute_tool
from tests.bash_tool import bash, bash_context, bash_project
from tests.environments import unsandboxed

KEY = "sk-ant-api03-" + "A1b2C3d4E5f6G7h8" * 4


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return bash_project(tmp_path)


@pytest.fixture
def ctx(project: Path) -> ToolContext:
    return bash_context(project)


def process_gone(pid: int) -> bool:
    """True once `pid` no longer runs (a zombie waiting for its reaper counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def test_runs_in_the_project_directory_with_merged_output(ctx: ToolContext, project: Path) -> None:
    result = bash(ctx, "pwd; echo out; echo err >&2")
    assert not result.is_error
    assert result.content.splitlines() == [str(project), "out", "err"]


def test_a_non_zero_exit_is_reported_but_is_not_a_tool_error(ctx: ToolContext) -> None:
    result = bash(ctx, "echo failing; exit 3")
    assert not result.is_error
    assert result.content == "failing\n\n[exit code 3]"


def test_no_output_says_so(ctx: ToolContext) -> None:
    assert bash(ctx, "true").content == "(no output)"


def test_each_command_runs_in_a_fresh_shell_and_restart_explains_that(ctx: ToolContext) -> None:
    bash(ctx, "cd /tmp; export SOMETHING=1")
    assert bash(ctx, "pwd; echo ${SOMETHING-unset}").content.splitlines()[1] == "unset"
    restart = execute_tool("bash", {"restart": True}, ctx)
    assert not restart.is_error and "fresh bash process" in restart.content


def test_the_api_key_never_reaches_the_agent(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "auth-token-value-123")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret_value_0000")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-secret-value-000")
    monkeypatch.setenv("INNOCENT_LOOKING", KEY)
    monkeypatch.setenv("PLAIN_SETTING", "visible")
    # As a run builds it (`safety.sandbox_setting.check_variables`): the environment as it is now, scrubbed.
    ctx = ToolContext(environment=unsandboxed(project, scrubbed_environment()), bash_timeout=10)
    env_dump = bash(ctx, "env")
    echo = bash(ctx, 'echo "key=[$ANTHROPIC_API_KEY]"')
    for result in (env_dump, echo):
        for secret in (KEY, "auth-token-value-123", "ghp_secret_value_0000", "aws-secret-value-000"):
            assert secret not in result.content
        assert "ANTHROPIC" not in result.content.replace("ANTHROPIC_API_KEY]", "")
    assert echo.content == "key=[]"
    assert "PLAIN_SETTING=visible" in env_dump.content
    assert "ORCHESTRATE_AGENT=1" in env_dump.content


def test_a_caller_supplied_environment_is_still_stripped_of_the_key(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    ctx = ToolContext(environment=unsandboxed(project, {"PATH": os.environ["PATH"], "ANTHROPIC_API_KEY": KEY, "X": KEY}))
    result = bash(ctx, "env")
    assert KEY not in result.content and "X=" not in result.content


def test_a_key_that_leaks_into_output_anyway_is_redacted(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    (ctx.project_root / "notes.txt").write_text(f"someone pasted {KEY} here\n")
    result = bash(ctx, "cat notes.txt")
    assert KEY not in result.content and "[REDACTED]" in result.content


def test_a_hung_command_is_killed_at_its_timeout_with_its_children(project: Path) -> None:
    ctx = ToolContext(environment=unsandboxed(project), bash_timeout=1.0)
    pid_file = project / "pids"
    started = time.monotonic()
    result = bash(ctx, f"echo started; sleep 100 & echo $! > {pid_file}; sleep 100 & echo $! >> {pid_file}; wait")
    elapsed = time.monotonic() - started
    assert result.is_error
    assert "timed out after 1 s" in result.content and "started" in result.content
    assert elapsed < 5
    pids = [int(line) for line in pid_file.read_text().split()]
    assert len(pids) == 2
    deadline = time.monotonic() + 3
    while not all(process_gone(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(process_gone(pid) for pid in pids)


def test_background_processes_do_not_outlive_a_finished_command(ctx: ToolContext, project: Path) -> None:
    result = bash(ctx, "sleep 100 >/dev/null 2>&1 & echo $!")
    pid = int(result.content.strip())
    deadline = time.monotonic() + 3
    while not process_gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert process_gone(pid)


def test_a_background_child_holding_the_output_open_does_not_hang_the_tool(ctx: ToolContext) -> None:
    started = time.monotonic()
    result = bash(ctx, "echo before; (sleep 100 &); echo after")
    assert time.monotonic() - started < 5
    assert "before" in result.content and "after" in result.content


def test_an_interrupt_kills_the_command_and_propagates(project: Path) -> None:
    ctx = ToolContext(environment=unsandboxed(project), bash_timeout=30)
    pid_file = project / "pid"
    main_thread = threading.get_ident()

    def interrupt_soon() -> None:
        deadline = time.monotonic() + 5
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.1)
        signal.pthread_kill(main_thread, signal.SIGINT)

    threading.Thread(target=interrupt_soon, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        bash(ctx, f"sleep 100 & echo $! > {pid_file}; wait")
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 3
    while not process_gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert process_gone(pid)


def test_long_output_keeps_head_and_tail_and_says_what_was_cut(project: Path) -> None:
    ctx = ToolContext(environment=unsandboxed(project), output_cap=1000)
    result = bash(ctx, "seq 1 100000")
    assert len(result.content) < 1300
    lines = result.content.splitlines()
    assert lines[0] == "1" and lines[-1] == "100000"
    assert "characters elided" in result.content


def test_output_that_is_not_utf8_is_decoded_with_replacements(ctx: ToolContext) -> None:
    result = bash(ctx, r"printf 'ok \xff\xfe done\n'")
    assert not result.is_error and result.content.startswith("ok ") and "done" in result.content


def test_stdin_is_empty_so_nothing_waits_for_input(ctx: ToolContext) -> None:
    started = time.monotonic()
    result = bash(ctx, "read line; echo got:[$line]")
    assert time.monotonic() - started < 5
    assert "got:[]" in result.content


def test_a_missing_project_directory_is_an_error_not_a_crash(tmp_path: Path) -> None:
    ctx = ToolContext(environment=unsandboxed(tmp_path / "gone"))
    result = bash(ctx, "echo hi")
    assert result.is_error and "could not start bash" in result.content


def test_the_group_is_killed_even_if_the_shell_ignores_sigterm(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(process_group, "TERM_GRACE", 0.3)
    ctx = ToolContext(environment=unsandboxed(project), bash_timeout=0.5)
    started = time.monotonic()
    result = bash(ctx, "trap '' TERM; while true; do sleep 0.05; done")
    assert result.is_error and "timed out" in result.content
    assert time.monotonic() - started < 4
