"""The tests' in-process CLI (`tests/cli_in_process.py`) must give what a new `python -m
orchestrator` process gives: the same output and exit status, in its own directory and
environment, and leave nothing behind for the next call, as a process that ended would."""

from __future__ import annotations

import os
import signal
import subprocess
import threading

import pytest

from tests.cli_helpers import cli_env, read_json, run_cli, write_spec
from tests.cli_in_process import NeedsProcess, run_here
from tests.git_helpers import init_repo


@pytest.mark.parametrize("args", [
    ["--help"], ["status"], ["run", "missing.json"], ["run", "spec.json", "--jobs", "0"], ["doctor"],
    ["validate", "spec.json"], ["no-such-command"], ["--version"],
])
def test_in_process_the_cli_says_and_exits_as_a_new_process(project, args):
    write_spec(project, 2)

    here = run_cli(args, project)
    fresh = run_cli(args, project, process=True)

    assert (here.code, here.stdout, here.stderr) == (fresh.code, fresh.stdout, fresh.stderr)


def test_two_calls_in_a_row_each_have_their_own_directory_and_environment(fake_api, project, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    write_spec(project, 2)
    write_spec(other, 1)

    first = run_cli(["run", "spec.json", "--no-commit"], project, fake_api, ORCHESTRATE_MAX_COST="7")
    second = run_cli(["run", "spec.json", "--no-commit"], other, fake_api)
    doctor = run_cli(["doctor"], project, fake_api, ORCHESTRATE_MAX_COST="7")
    plain = run_cli(["doctor"], other, fake_api)

    assert (first.code, second.code) == (0, 0), first.stderr + second.stderr
    assert sorted(read_json(project / ".autonomous/state/execution-state.json")["features"]) == ["feat-01", "feat-02"]
    assert sorted(read_json(other / ".autonomous/state/execution-state.json")["features"]) == ["feat-01"]
    assert "ORCHESTRATE_MAX_COST" not in os.environ
    max_cost = [next(line for line in result.stdout.splitlines() if "max_cost" in line) for result in (doctor, plain)]
    assert "7" in max_cost[0] and "environment" in max_cost[0], max_cost
    assert "environment" not in max_cost[1], max_cost


def test_a_call_leaves_this_process_as_it_found_it(fake_api, project):
    write_spec(project, 2)
    init_repo(project)
    before = _process_state()

    result = run_cli(["run", "spec.json", "--jobs", "2", "--sandbox", "none"], project, fake_api)

    assert result.code == 0, result.stderr
    _wait_for_the_fake_api_to_close_its_connections()
    after = _process_state()
    # An earlier test's server thread (or its socket) may end during this call: what must hold is
    # that the call left nothing of its own behind, and changed nothing that was there.
    for key in ("threads", "fds"):
        left = after.pop(key)
        found = before.pop(key)
        assert [item for item in left if item not in found] == [], f"{key} the call left behind"
    assert after == before


def _wait_for_the_fake_api_to_close_its_connections() -> None:
    """A connection the client closed is closed on the fake's side by its own thread a moment
    later; until then that socket is the fake's open file, not one the CLI left behind."""
    for thread in threading.enumerate():
        if "process_request" in thread.name:
            thread.join(timeout=10)


def _process_state() -> dict[str, object]:
    umask = os.umask(0)
    os.umask(umask)
    return {
        "environ": dict(os.environ), "cwd": os.getcwd(), "umask": umask,
        "handlers": {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE)},
        # The fake API's own threads serving a connection are this process's, not the CLI's.
        "threads": sorted(thread.name for thread in threading.enumerate() if "process_request" not in thread.name),
        "fds": sorted(_open_files().items()),
    }


def _open_files() -> dict[str, str]:
    """Each open descriptor and what it points at, so a failure names the file left open."""
    targets = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            targets[fd] = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # the directory listing's own descriptor, closed by now
            continue
    return targets


@pytest.mark.parametrize("name, value", [("ANTHROPIC_LOG", "debug"), ("PYTHONWARNINGS", "error"), ("LANG", "C")])
def test_an_environment_read_once_per_interpreter_is_refused_saying_to_ask_for_a_process(project, name, value):
    with pytest.raises(NeedsProcess, match=f"{name}.*process=True"):
        run_here(["doctor"], project, {**cli_env(None), name: value}, 60)


def test_a_call_past_its_timeout_is_interrupted_and_saves_its_state(fake_api, project):
    fake_api.latency = 60
    write_spec(project, 1)

    with pytest.raises(subprocess.TimeoutExpired) as raised:
        run_cli(["run", "spec.json", "--no-commit"], project, fake_api, timeout=5)

    assert fake_api.requests, "the run did not reach its first model call in 5 s"
    assert "interrupted" in str(raised.value.stderr)
    assert not (project / ".autonomous/state/run.lock").exists()  # released, as Ctrl-C leaves it


def test_two_bedrock_calls_do_not_share_aws_credentials(fake_api, project):
    # The SDK keeps one boto3 session per set of explicit keys (none here: read from the
    # environment), and the session keeps the credentials it first read: the second call's
    # must be its own, as a new process's would be.
    from fake_messages_api.cloud_providers import TEST_AWS_ACCESS_KEY, TEST_AWS_SECRET_KEY

    spec = write_spec(project, 1)
    env = {"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": TEST_AWS_ACCESS_KEY, "AWS_EC2_METADATA_DISABLED": "true",
           "ANTHROPIC_BEDROCK_BASE_URL": fake_api.base_url}
    args = ["run", str(spec), "--provider", "bedrock", "--only", "feat-01"]

    refused = run_cli(args, project, key=None, AWS_SECRET_ACCESS_KEY="not-the-secret", **env)
    accepted = run_cli(args, project, key=None, AWS_SECRET_ACCESS_KEY=TEST_AWS_SECRET_KEY, **env)

    assert refused.code == 2 and "signature" in refused.stderr, refused.stderr
    assert accepted.code == 0, accepted.stderr
