"""An artifact is untrusted input: `orchestrate combine` refuses (exit 2, nothing combined) an
artifact whose branch writes the project's `.autonomous/`, one holding links or oversized files,
one whose totals would cut the recorded spend, and one made from another spec.

Each test builds a real shard artifact (`run` + `export` in a clone of a bare remote), alters it
as an attacker who controls a shard's job output could, and combines it in a fresh clone."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.cli_helpers import CliResult, read_json, run_cli, write_spec
from tests.git_helpers import clone, git, init_repo

pytestmark = [pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"), pytest.mark.slow]
STATE = Path("autonomous/state/execution-state.json")
TOKEN = "docker-registry-token-5b1e"


@dataclass
class Shard:
    remote: Path
    spec: Path
    runner: Path  # the shard's project, its branch holding the checkpoints
    artifact: Path

    @property
    def cost(self) -> float:
        return float(read_json(self.artifact / STATE)["totals"]["costUsd"])

    @property
    def run_id(self) -> str:
        return str(read_json(self.artifact / STATE)["runId"])


def _shard(fake_api: Any, tmp_path: Path) -> Shard:
    seed = init_repo(tmp_path / "seed")
    remote = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(seed), str(remote))
    spec = write_spec(tmp_path, 2)
    runner = clone(remote, tmp_path / "runner")
    ran = run_cli(["run", str(spec)], runner, fake_api)
    assert ran.code == 0, ran.stderr
    artifact = tmp_path / "artifacts" / "shard"
    exported = run_cli(["export", str(artifact)], runner, fake_api)
    assert exported.code == 0, exported.stderr
    assert _json(artifact / STATE)["totals"]["costUsd"] > 0
    return Shard(remote, spec, runner, artifact)


def _json(path: Path) -> Any:
    return json.loads(path.read_text())


def _edit_json(path: Path, change: Any) -> None:
    data = _json(path)
    change(data)
    path.write_text(json.dumps(data, indent=2))


def _copy(artifact: Path, name: str) -> Path:
    target = artifact.parent / name
    shutil.copytree(artifact, target, symlinks=True)
    return target


def _combine(fake_api: Any, shard: Shard, project: Path, *artifacts: Path) -> CliResult:
    return run_cli(["combine", str(shard.spec), *map(str, artifacts)], project, fake_api)


def _recorded_cost(fake_api: Any, project: Path) -> float:
    shown = run_cli(["status", "--json"], project, fake_api)
    assert shown.code == 0, shown.stderr
    return float(json.loads(shown.stdout)["totals"]["costUsd"])


def _refused_untouched(result: CliResult, project: Path, *said: str) -> None:
    """Exit 2 saying `said`, no traceback, the branch as cloned and no state written."""
    assert result.code == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    for text in said:
        assert text in result.stderr, result.stderr
    assert git(project, "log", "--format=%s", "-1") == "initial"
    assert not (project / ".autonomous" / "state" / "execution-state.json").exists()


def test_a_shard_branch_amended_to_write_the_run_records_is_refused(fake_api: Any, tmp_path: Path) -> None:
    shard = _shard(fake_api, tmp_path)
    honest_cost = shard.cost
    # The checkpoint amended to claim the shard's spend was imported already, and to forge a log.
    claim = json.dumps({"imports": {shard.run_id: read_json(shard.artifact / STATE)["totals"]}})
    for path, text in ((".autonomous/state/combined.json", claim), (".autonomous/logs/feat-02.json", '{"FORGED": 1}')):
        blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=shard.runner, input=text, text=True,
                              capture_output=True, check=True).stdout.strip()
        git(shard.runner, "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}")
    git(shard.runner, "commit", "-q", "--amend", "--no-edit")
    # `export` refuses a repository that tracks `.autonomous` (state_guard): the attacker's copy untracks
    # it in the index only, so the amended commit it bundles still writes the records.
    git(shard.runner, "rm", "-r", "-q", "--cached", ".autonomous")
    forged = tmp_path / "artifacts" / "forged"
    assert run_cli(["export", str(forged)], shard.runner, fake_api).code == 0
    project = clone(shard.remote, tmp_path / "combine")

    refused = _combine(fake_api, shard, project, forged)

    _refused_untouched(refused, project, "changes .autonomous/", str(forged))
    assert git(project, "ls-files", "--", ".autonomous") == ""
    assert not (project / ".autonomous" / "state" / "combined.json").exists()
    assert git(project, "for-each-ref", "refs/orchestrate/import") == ""  # the forged commits not kept
    # The honest artifact still combines, its whole spend recorded.
    combined = _combine(fake_api, shard, project, shard.artifact)
    assert combined.code == 0, combined.stdout + combined.stderr
    assert _recorded_cost(fake_api, project) == pytest.approx(honest_cost)
    assert git(project, "ls-files", "--", ".autonomous") == ""


def test_links_and_oversized_files_in_an_artifact_are_refused(fake_api: Any, tmp_path: Path) -> None:
    shard = _shard(fake_api, tmp_path)
    secret = tmp_path / "home" / ".docker" / "config.json"
    secret.parent.mkdir(parents=True)
    secret.write_text(json.dumps({"id": "feat-01", "auths": {"registry": TOKEN}}))
    log_link = _copy(shard.artifact, "log-link")
    (log_link / "autonomous/logs/feat-01.json").unlink()
    (log_link / "autonomous/logs/feat-01.json").symlink_to(secret)
    # A valid state, kept outside the artifact and linked to: still a link, still refused.
    state_link = _copy(shard.artifact, "state-link")
    outside_state = tmp_path / "elsewhere.json"
    shutil.move(state_link / STATE, outside_state)
    (state_link / STATE).symlink_to(outside_state)
    endless = _copy(shard.artifact, "endless")
    (endless / STATE).unlink()
    (endless / STATE).symlink_to("/dev/zero")
    hard_link = _copy(shard.artifact, "hard-link")
    (hard_link / "autonomous/logs/feat-01.json").unlink()
    os.link(secret, hard_link / "autonomous/logs/feat-01.json")
    huge_log = _copy(shard.artifact, "huge-log")
    with (huge_log / "autonomous/logs/feat-02.json").open("r+b") as handle:
        handle.truncate(17 * 1024 * 1024)  # sparse: larger than any log this program writes
    project = clone(shard.remote, tmp_path / "combine")

    for artifact, said in ((log_link, "a symbolic link"), (state_link, "a symbolic link"),
                           (endless, "a symbolic link"), (hard_link, "a hard link"), (huge_log, "bytes, more than")):
        refused = _combine(fake_api, shard, project, artifact)
        _refused_untouched(refused, project, said, str(artifact))
    assert not any(TOKEN in p.read_text(errors="replace") for p in project.rglob("*") if p.is_file())


def test_forged_totals_never_cut_the_recorded_spend(fake_api: Any, tmp_path: Path) -> None:
    shard = _shard(fake_api, tmp_path)
    negative = _copy(shard.artifact, "negative")
    _edit_json(negative / STATE, lambda state: state["totals"].update(costUsd=-1000))
    zeroed = _copy(shard.artifact, "zeroed")  # the same run id, totals zero
    _edit_json(zeroed / STATE, lambda state: state.update(totals={}))
    project = clone(shard.remote, tmp_path / "combine")

    _refused_untouched(_combine(fake_api, shard, project, negative), project, "costUsd = -1000", "never negative")
    _refused_untouched(_combine(fake_api, shard, project, shard.artifact, zeroed), project, "the same run id")
    combined = _combine(fake_api, shard, project, shard.artifact)
    assert combined.code == 0, combined.stdout + combined.stderr
    assert _recorded_cost(fake_api, project) == pytest.approx(shard.cost)
    # Later, alone: its run was combined with more spent; refused, the spend as it was.
    again = _combine(fake_api, shard, project, zeroed)
    assert again.code == 2 and "never shrinks" in again.stderr, again.stdout + again.stderr
    assert _recorded_cost(fake_api, project) == pytest.approx(shard.cost)


def test_an_artifact_of_another_spec_or_with_an_oversized_manifest_is_refused(fake_api: Any, tmp_path: Path) -> None:
    shard = _shard(fake_api, tmp_path)
    other_spec = _copy(shard.artifact, "other-spec")
    for name in ("manifest.json", str(STATE)):
        _edit_json(other_spec / name, lambda data: data.update(specHash="0" * 64))
    padded = _copy(shard.artifact, "padded")
    with (padded / "manifest.json").open("a") as handle:
        handle.write(" " * (2 * 1024 * 1024))  # still valid JSON, larger than any manifest
    project = clone(shard.remote, tmp_path / "combine")

    _refused_untouched(_combine(fake_api, shard, project, other_spec), project, "made from another spec")
    _refused_untouched(_combine(fake_api, shard, project, padded), project, "manifest.json", "more than")
    assert os.path.getsize(padded / "manifest.json") > 2 * 1024 * 1024
