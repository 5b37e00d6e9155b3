"""The harness's own check: exit codes decide, output stays bounded, nothing is left running."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import tracemalloc
from pathlib import Path
from typing import Any

from orchestrator.run.checks.running.check_command import run_check
from shared_base.check_result import CheckResult
from tests.environments import unsandboxed

REPO_ROOT = Path(__file__).resolve().parents[4]


def is_running(pid: int) -> bool:
    """True while `pid` exists and is not a zombie (zombies may linger unreaped in containers)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_until_gone(pid: int, seconds: float = 3.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not is_running(pid):
            return True
        time.sleep(0.02)
    return False


def read_pid(path: Path, seconds: float = 10.0) -> int:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        text = path.read_text() if path.exists() else ""
        if text.endswith("\n"):
            return int(text)
        time.sleep(0.02)
    raise AssertionError(f"{path} was never written")


def test_exit_zero_is_a_pass(tmp_path: Path) -> None:
    result = run_check("echo all good", unsandboxed(tmp_path), attempt=1)
    assert result.success is True
    assert result.exit_code == 0
    assert result.output == "all good\n"
    assert result.error is None
    assert result.skipped is False
    assert result.attempt == 1


def test_nonzero_exit_is_a_failure_with_stdout_and_stderr_merged(tmp_path: Path) -> None:
    result = run_check("echo to-stdout; echo to-stderr >&2; exit 3", unsandboxed(tmp_path), attempt=2)
    assert result.success is False
    assert result.exit_code == 3
    assert result.output == "to-stdout\nto-stderr\n"
    assert result.attempt == 2


def test_missing_command_says_command_not_found(tmp_path: Path) -> None:
    result = run_check("no-such-tool-xyz --check", unsandboxed(tmp_path), attempt=1)
    assert result.success is False
    assert result.exit_code == 127
    assert result.error == "command not found"
    assert "no-such-tool-xyz" in result.output


def test_death_by_signal_is_reported(tmp_path: Path) -> None:
    result = run_check("kill -TERM $$", unsandboxed(tmp_path), attempt=1)
    assert result.success is False
    assert result.exit_code == -signal.SIGTERM
    assert result.error == "killed by signal SIGTERM"


def test_check_runs_in_the_project_with_the_given_environment(tmp_path: Path) -> None:
    env = {"PATH": os.environ["PATH"], "MARKER": "from-caller"}
    command = 'pwd; echo "$MARKER ${ANTHROPIC_API_KEY-unset}"'
    result = run_check(command, unsandboxed(tmp_path, env), attempt=1)
    assert result.output.splitlines() == [str(tmp_path), "from-caller unset"]


def test_check_reading_stdin_gets_end_of_file_instead_of_hanging(tmp_path: Path) -> None:
    result = run_check("cat; echo done", unsandboxed(tmp_path), attempt=1, timeout=5)
    assert result.success is True
    assert result.output == "done\n"


def test_a_project_directory_that_does_not_exist_cannot_start(tmp_path: Path) -> None:
    result = run_check("true", unsandboxed(tmp_path / "missing"), attempt=1)
    assert result.success is False
    assert result.error is not None and result.error.startswith("could not start:")
    assert "missing" in result.error


def test_long_output_keeps_a_bounded_tail_cut_at_a_line_boundary(tmp_path: Path) -> None:
    full = "".join(f"{n}\n" for n in range(1, 100_001))
    result = run_check("seq 1 100000", unsandboxed(tmp_path), attempt=1, output_limit=300)

    assert len(result.output) <= 300
    note, kept = result.output.split("\n", 1)
    assert note.startswith("…[") and note.endswith(" earlier characters omitted]")
    assert int(note[2:].split()[0]) == len(full) - len(kept)
    assert full.endswith(kept)
    # Starts at the beginning of a line: the first kept line is a whole number.
    assert full[len(full) - len(kept) - 1] == "\n"
    assert kept.endswith("100000\n")


def test_a_key_across_the_cut_of_the_kept_tail_leaves_no_fragment(tmp_path: Path, monkeypatch: Any) -> None:
    key = "corp-gateway-token-7f3a9c51e2d84b06a1c3"  # a known value, not shaped like a key
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", key)
    (tmp_path / "key.txt").write_text(key)
    for before_cut in range(0, len(key) + 1, 3):
        # No newline, so the kept tail starts wherever the limit falls: inside the key.
        result = run_check(f"printf '%05000d'; cat key.txt; printf '%0{300 - before_cut}d'", unsandboxed(tmp_path, {**os.environ}),
                           attempt=1, output_limit=300 + len("…[5000 earlier characters omitted]\n"))
        assert "earlier characters omitted" in result.output
        fragments = [key[i:i + 16] for i in range(len(key) - 15)]
        assert not any(fragment in result.output for fragment in fragments), before_cut


def test_short_output_is_not_marked_as_cut(tmp_path: Path) -> None:
    result = run_check("seq 1 10", unsandboxed(tmp_path), attempt=1, output_limit=300)
    assert result.output == "".join(f"{n}\n" for n in range(1, 11))


def test_non_utf8_output_is_decoded_with_replacement(tmp_path: Path) -> None:
    result = run_check(r"printf 'bad \xff\xfe byte\n'", unsandboxed(tmp_path), attempt=1)
    assert result.success is True
    assert result.output == "bad \ufffd\ufffd byte\n"


def test_multibyte_characters_split_across_reads_are_decoded_intact(tmp_path: Path) -> None:
    result = run_check("yes é | head -n 70000", unsandboxed(tmp_path), attempt=1, output_limit=200_000)
    # Counts, not `==`: pytest's diff of two 140 000-character strings would take minutes.
    replaced = result.output.count("\ufffd")
    assert replaced == 0
    assert result.output.count("é\n") == 70000


def test_huge_output_stays_bounded_in_memory_and_is_fast(tmp_path: Path) -> None:
    size = 50 * 1024 * 1024
    tracemalloc.start()
    started = time.monotonic()
    try:
        result = run_check(f"yes | head -c {size}", unsandboxed(tmp_path), attempt=1)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.monotonic() - started < 5
    assert result.success is True
    assert len(result.output) <= 4000
    assert peak < 2 * 1024 * 1024, f"peak memory {peak} bytes for a 4000-character tail"
    note, kept = result.output.split("\n", 1)
    assert note == f"…[{size - len(kept)} earlier characters omitted]"


def run_check_isolated(
    tmp_path: Path, command: str, timeout: float, pid_file: Path
) -> dict[str, Any]:
    """run_check in a child interpreter: a check never killed fails the test, not hangs it."""
    script = textwrap.dedent(
        f"""
        import json, time
        from pathlib import Path
        from orchestrator.run.checks.running.check_command import run_check
        from tests.environments import unsandboxed
        started = time.monotonic()
        result = run_check({command!r}, unsandboxed(Path({str(tmp_path)!r})), attempt=1, timeout={timeout!r})
        print(json.dumps({{**result.to_json(), "seconds": time.monotonic() - started}}))
        """
    )
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    try:
        done = subprocess.run(
            # Generous: the child's imports take seconds on a loaded machine; the check's own
            # time is measured inside it.
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
        )
    except subprocess.TimeoutExpired:
        if pid_file.exists():  # clean up what the broken check left behind
            os.kill(read_pid(pid_file), signal.SIGKILL)
        raise AssertionError(f"run_check did not return after its {timeout} s timeout") from None
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    command = f"sleep 1000 & echo $! > {pid_file}; echo waiting; sleep 1000"
    result = run_check_isolated(tmp_path, command, 0.5, pid_file)
    assert result["seconds"] < 5  # the check sleeps 1000 s unless the timeout kills it
    assert result["success"] is False
    assert result["exitCode"] is None
    assert result["error"] == "timed out after 0.5 s"
    assert result["output"] == "waiting\n"
    assert wait_until_gone(read_pid(pid_file)), "the check's background child survived"


def test_a_check_ignoring_sigterm_is_killed_after_a_grace_period(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    command = f"trap '' TERM; sleep 1000 & echo $! > {pid_file}; wait"
    result = run_check_isolated(tmp_path, command, 0.3, pid_file)
    assert result["seconds"] < 7  # ignoring SIGTERM, it waits 1000 s unless killed after the grace
    assert result["error"] == "timed out after 0.3 s"
    assert wait_until_gone(read_pid(pid_file))


def test_background_processes_left_by_a_passing_check_are_stopped(tmp_path: Path) -> None:
    pid_file = tmp_path / "server.pid"
    started = time.monotonic()
    # The background child keeps the output pipe open: the check must not wait for it.
    result = run_check(f"sleep 1000 & echo $! > {pid_file}; echo ok", unsandboxed(tmp_path), attempt=1)
    assert time.monotonic() - started < 4
    assert result.success is True
    assert result.output == "ok\n"
    assert wait_until_gone(read_pid(pid_file))


def test_ctrl_c_during_a_check_kills_it_and_interrupts_the_caller(tmp_path: Path) -> None:
    shell_pid_file = tmp_path / "shell.pid"
    child_pid_file = tmp_path / "child.pid"
    script = textwrap.dedent(
        f"""
        from pathlib import Path
        from orchestrator.run.checks.running.check_command import run_check
        from tests.environments import unsandboxed
        run_check(
            "echo $$ > {shell_pid_file}; sleep 1000 & echo $! > {child_pid_file}; wait",
            unsandboxed(Path({str(tmp_path)!r})),
            attempt=1,
            timeout=60,
        )
        print("run_check returned")
        """
    )
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    runner = subprocess.Popen(
        [sys.executable, "-c", script],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    pids: list[int] = []
    try:
        # Generous waits: a loaded machine may take seconds to start Python. The SIGINT may
        # land while run_check is still inside subprocess.Popen; that used to leak the shell.
        pids = [read_pid(shell_pid_file, 60), read_pid(child_pid_file, 60)]
        runner.send_signal(signal.SIGINT)
        stdout, stderr = runner.communicate(timeout=60)
        assert runner.returncode == -signal.SIGINT, stderr
        assert "KeyboardInterrupt" in stderr
        assert "run_check returned" not in stdout
        assert wait_until_gone(pids[0]), "the check's shell survived Ctrl-C"
        assert wait_until_gone(pids[1]), "the check's background child survived Ctrl-C"
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
        for pid in pids:  # whatever a failing run_check left behind
            if is_running(pid):
                os.kill(pid, signal.SIGKILL)


def test_json_uses_the_exact_camel_case_keys(tmp_path: Path) -> None:
    result = run_check("exit 1", unsandboxed(tmp_path), attempt=3)
    data = result.to_json()
    assert list(data) == ["command", "success", "exitCode", "output", "error", "skipped", "attempt"]
    assert data == {
        "command": "exit 1",
        "success": False,
        "exitCode": 1,
        "output": "",
        "error": None,
        "skipped": False,
        "attempt": 3,
    }
    # A saved result loads back (state and logs round-trip through JSON).
    assert CheckResult.model_validate(json.loads(json.dumps(data))) == result
