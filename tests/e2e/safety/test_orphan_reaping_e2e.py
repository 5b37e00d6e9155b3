"""Issue 29: under `--jobs N` every sandboxed check left an adopted zombie (the sandbox's inner
process, orphaned when its `bwrap` exited first), which nothing reaped: the process table every
command's clean-up reads grew with the run, and each feature cost more than the one before.
Run in a process of its own: it becomes a subreaper and says commands run concurrently."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from tests.cli_helpers import REPO_ROOT

SCRIPT = textwrap.dedent("""
    import json, os, subprocess, time
    from orchestrator.safety.processes.descendants import CommandProcesses, commands_run_concurrently

    def zombie_children():
        found = []
        for entry in os.listdir("/proc"):
            try:
                fields = open(f"/proc/{entry}/stat", "rb").read().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if fields[0] == b"Z" and int(fields[1]) == os.getpid():
                found.append(int(entry))
        return found

    CommandProcesses()  # this process becomes a subreaper, as a run does
    commands_run_concurrently()
    # A child of ours, dead but not yet waited for by its Popen: it is not the clean-up's to reap.
    mine = subprocess.Popen(["bash", "-c", "exit 3"], start_new_session=True)
    for _ in range(5):
        command = CommandProcesses()
        shell = subprocess.Popen(["bash", "-c", "(sleep 0.1; exit 0) & exit 0"], start_new_session=True,
                                 env=command.environment(None))
        shell.wait()
        time.sleep(0.4)  # the background part exits after its shell: adopted by us, a zombie
        command.stop_leftovers(grace=1.0, owned_pid=shell.pid)
    left = [pid for pid in zombie_children() if pid != mine.pid]
    print(json.dumps({"left": left, "mine": mine.wait()}))
""")


def test_adopted_zombies_are_reaped_when_commands_run_concurrently() -> None:
    run = subprocess.run([sys.executable, "-c", SCRIPT], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)

    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["left"] == []  # one per command before: the table grew with every check
    assert result["mine"] == 3  # a child its Popen still waits for keeps its exit status
