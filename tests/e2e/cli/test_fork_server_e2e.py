"""The tests' fork server (`tests/fork_server.py`) must give what a fresh `python -m orchestrator`
gives: the same output, exit status, directory and environment, and a fresh interpreter
whenever the environment differs in what is read at import. (Its /proc/<pid>/cmdline and
environ: tests/e2e/safety/test_own_environ_e2e.py.)"""

from __future__ import annotations

import subprocess
import threading
import time

import pytest

from tests import fork_server
from tests.cli_helpers import cli_env, orchestrate_command, read_json, run_cli, write_spec

pytestmark = pytest.mark.skipif(not fork_server.ENABLED or bool(fork_server.unavailable),
                                reason=fork_server.unavailable or "ORCHESTRATE_TESTS_FORK_SERVER=0")


def _fresh(args: list[str], cwd, env) -> tuple[int, str, str]:
    proc = subprocess.run(orchestrate_command(*args), cwd=cwd, env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize("args", [
    ["--help"], ["status"], ["run", "missing.json"], ["run", "spec.json", "--jobs", "0"], ["doctor"],
    ["validate", "spec.json"], ["no-such-command"],
])
def test_a_forked_cli_says_and_exits_as_a_fresh_one(project, args):
    write_spec(project, 2)
    env = cli_env(None)
    server = fork_server.server_for(env)
    assert server is not None and server.can_serve(env, project)

    assert server.run(args, project, env, 60) == _fresh(args, project, env)


def test_a_forked_run_builds_in_its_own_directory_with_its_own_environment(fake_api, project, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    write_spec(project, 2)
    write_spec(other, 1)
    served_before = _served()

    first = run_cli(["run", "spec.json", "--no-commit"], project, fake_api, ORCHESTRATE_MAX_COST="7")
    second = run_cli(["run", "spec.json", "--no-commit"], other, fake_api)
    doctor = run_cli(["doctor"], project, fake_api, ORCHESTRATE_MAX_COST="7")

    assert _served() == served_before + 3  # all three forked, none a fresh interpreter
    assert (first.code, second.code) == (0, 0), first.stderr + second.stderr
    assert sorted(read_json(project / ".autonomous/state/execution-state.json")["features"]) == ["feat-01", "feat-02"]
    assert sorted(read_json(other / ".autonomous/state/execution-state.json")["features"]) == ["feat-01"]
    max_cost = next(line for line in doctor.stdout.splitlines() if "max_cost" in line)
    assert "7" in max_cost and "environment" in max_cost, max_cost


def _served() -> int:
    server = fork_server.server_for(cli_env(None, key=None))
    assert server is not None
    return server.served


def test_two_clis_can_run_at_once(fake_api, project, tmp_path):
    fake_api.latency = 0.5
    projects = [tmp_path / "a", tmp_path / "b"]
    results = {}

    def build(directory):
        directory.mkdir()
        write_spec(directory, 1)
        results[directory.name] = run_cli(["run", "spec.json", "--no-commit"], directory, fake_api)

    served_before = _served()
    threads = [threading.Thread(target=build, args=(directory,)) for directory in projects]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert _served() == served_before + 2
    assert [results[name].code for name in ("a", "b")] == [0, 0], [r.stderr for r in results.values()]


@pytest.mark.parametrize("name, value", [("TERM", "dumb-but-different"), ("ANTHROPIC_LOG", "debug"),
                                         ("PYTHONWARNINGS", "error"), ("LANG", "C")])
def test_an_environment_read_at_import_gets_a_fresh_interpreter(project, name, value):
    env = cli_env(None)
    server = fork_server.server_for(env)
    assert server is not None and server.can_serve(env, project)
    assert not server.can_serve({**env, name: value}, project)


def test_a_cli_past_its_timeout_is_killed_as_subprocess_run_does(fake_api, project):
    fake_api.latency = 60
    write_spec(project, 1)

    with pytest.raises(subprocess.TimeoutExpired):
        run_cli(["run", "spec.json", "--no-commit"], project, fake_api, timeout=10)
    assert fake_api.requests, "the run did not reach its first model call in 10 s"

    # Killed (-9), so its run lock stays, naming it, and it is gone.
    pid = read_json(project / ".autonomous/state/run.lock")["pid"]
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
