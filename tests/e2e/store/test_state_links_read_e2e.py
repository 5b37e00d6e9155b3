"""Issue 40: nothing orchestrate reads under `.autonomous/` is read through a link.

One run builds a project's state. Then, one at a time, a file of it is replaced by a link to
a secret outside the project (as a clone could ship, or an agent's command write where no
sandbox keeps `.autonomous/` read-only), and the command that reads that file runs: each
refuses with exit 2 and one line naming the link, prints nothing of the secret, and leaves the
secret as it was (nothing written through the link either). The files and their readers:
the state snapshot and journal (`status`, `run`), the working-memory log (`run`, `report
--html`), the event log (`report`), the run lock (`run`) and the run times (`verify`).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.cli_helpers import run_cli, write_spec
from tests.fake_api_fixtures import running_fake_api
from tests.git_helpers import init_repo

pytestmark = [
    pytest.mark.attack,
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
]

SECRET = "-----BEGIN OPENSSH PRIVATE KEY-----\nstate-link-secret-40c3\n"
CASES = [
    pytest.param("state/execution-state.json", ["status"], id="state-status"),
    pytest.param("state/execution-state.json", ["run", "{spec}"], id="state-run"),
    pytest.param("state/journal.jsonl", ["status"], id="journal-status"),
    pytest.param("state/journal.jsonl", ["run", "{spec}"], id="journal-run"),
    pytest.param("memory/working-memory.jsonl", ["run", "{spec}"], id="memory-run"),
    pytest.param("memory/working-memory.jsonl", ["report", "--html", "{out}/report.html"], id="memory-report"),
    pytest.param("events.jsonl", ["report"], id="events-report"),
    pytest.param("state/run.lock", ["run", "{spec}"], id="lock-run"),
    pytest.param("state/run-times.json", ["verify"], id="run-times-verify"),
]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A project where feat-01 of two passed (so a resumed run has work), and its spec."""
    base = tmp_path_factory.mktemp("built")
    project = init_repo(base / "project")
    spec = write_spec(base, 2)
    with running_fake_api() as fake:
        result = run_cli(["run", str(spec), "--only", "feat-01"], project, fake)
    assert result.code == 0, result.stderr
    return project, spec


@pytest.mark.parametrize("linked, command", CASES)
def test_a_link_in_place_of_a_state_file_is_refused_and_nothing_outside_is_read(
    fake_api: Any, built: tuple[Path, Path], tmp_path: Path, linked: str, command: list[str]
) -> None:
    project = tmp_path / "project"
    shutil.copytree(built[0], project, symlinks=True)
    secret = tmp_path / "outside" / "id_ed25519"
    secret.parent.mkdir()
    secret.write_text(SECRET)
    target = project / ".autonomous" / linked
    if target.exists() or target.is_symlink():
        target.unlink()
    if linked == "state/journal.jsonl":  # a journal is read only beside a snapshot
        assert (project / ".autonomous/state/execution-state.json").is_file()
    target.symlink_to(secret)
    args = [arg.format(spec=built[1], out=tmp_path) for arg in command]

    result = run_cli(args, project, fake_api)

    output = result.stdout + result.stderr
    assert result.code == 2, output
    assert f"{target} is a symbolic link (to {secret})" in result.stderr, output
    assert "state-link-secret" not in output
    assert secret.read_text() == SECRET and not (tmp_path / "report.html").exists()
    assert target.is_symlink()  # refused, not replaced: the user sees what was planted
    assert fake_api.requests == []
