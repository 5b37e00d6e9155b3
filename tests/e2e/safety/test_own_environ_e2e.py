"""Without a sandbox, a check can walk up to the orchestrator and read `/proc/<pid>/environ`: the
key must not be there (`orchestrator.safety.credentials.own_environ`). The CLI gets a process of its own
(`process=True`): run in the test's process, its /proc would show pytest's, and this test would
pass for the wrong reason."""

from __future__ import annotations

import os

from tests.cli_helpers import TEST_KEY, run_cli, write_spec

PEEK = r"""
import os

def parent_of(pid):
    with open(f"/proc/{pid}/stat", "rb") as handle:
        return int(handle.read().rsplit(b")", 1)[1].split()[1])

pid = os.getppid()
for _ in range(4):
    with open(f"/proc/{pid}/cmdline", "rb") as handle:
        cmdline = handle.read()
    if b"\0-m\0orchestrator\0run\0" in cmdline:
        break
    pid = parent_of(pid)
else:
    raise SystemExit("the orchestrator is not among my ancestors")
with open(f"/proc/{pid}/environ", "rb") as handle:
    environ = handle.read()
with open("parent-cmdline.bin", "wb") as out:
    out.write(cmdline)
with open("parent-environ.bin", "wb") as out:
    out.write(environ)
"""


def test_the_orchestrators_proc_environ_shows_its_environment_without_the_key(fake_api, project):
    (project / "peek.py").write_text(PEEK)
    spec = write_spec(project, 1, verify="python3 peek.py && test -f features/{id}.txt")
    args = ["run", str(spec), "--sandbox", "none", "--no-commit"]
    result = run_cli(args, project, fake_api, process=True)
    code, stderr = result.code, result.stderr

    assert code == 0, stderr
    cmdline = (project / "parent-cmdline.bin").read_bytes().rstrip(b"\0").split(b"\0")
    environ = [entry for entry in (project / "parent-environ.bin").read_bytes().split(b"\0") if entry]
    assert cmdline[-5:] == [b"run", str(spec).encode(), b"--sandbox", b"none", b"--no-commit"]
    assert f"HOME={os.environ['HOME']}".encode() in environ  # this test's own home: this run's environment
    assert TEST_KEY.encode() not in b"\0".join(environ)
    assert any(entry.startswith(b"ANTHROPIC_API_KEY=") for entry in environ)  # there, its value wiped
