"""CI shards that hand their code over: 3 shard runs in 3 clones of one remote, their artifacts,
then `orchestrate combine` in a fourth clone (as a final `needs:` job would)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from fake_messages_api.scripted_agent.plans import edit_create, edit_str_replace, report
from orchestrator.spec.selection import select
from tests.cli_helpers import read_events, read_json, run_cli, write_spec
from tests.git_helpers import clone, git, init_repo, subjects

pytestmark = [pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"), pytest.mark.slow]
SHARDS = 3


def _remote(tmp_path: Path) -> Path:
    seed = init_repo(tmp_path / "seed")
    remote = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(seed), str(remote))
    return remote


def _shard_jobs(fake_api, tmp_path: Path, remote: Path, spec: Path) -> list[Path]:
    artifacts = []
    for index in range(1, SHARDS + 1):
        runner = clone(remote, tmp_path / f"runner-{index}")
        ran = run_cli(["run", str(spec), "--shard", f"{index}/{SHARDS}"], runner, fake_api)
        assert ran.code == 0, ran.stderr
        artifact = tmp_path / "artifacts" / f"shard-{index}"
        exported = run_cli(["export", str(artifact)], runner, fake_api)
        assert exported.code == 0, exported.stderr
        artifacts.append(artifact)
    return artifacts


def _status(project: Path, fake_api) -> dict:
    shown = run_cli(["status", "--json"], project, fake_api)
    assert shown.code == 0, shown.stderr
    return json.loads(shown.stdout)


def test_three_shards_combine_into_one_verified_branch(fake_api, tmp_path: Path) -> None:
    remote = _remote(tmp_path)
    spec = write_spec(tmp_path, 6)
    artifacts = _shard_jobs(fake_api, tmp_path, remote, spec)
    shard_costs = [read_json(a / "autonomous" / "state" / "execution-state.json")["totals"]["costUsd"] for a in artifacts]
    final = clone(remote, tmp_path / "combine")

    combined = run_cli(["combine", str(spec), *map(str, artifacts), "--junit", str(tmp_path / "c.xml")], final, fake_api)

    assert combined.code == 0, combined.stdout + combined.stderr
    checkpoints = subjects(final, "main")[1:]
    assert sorted(checkpoints) == [f"orchestrate: feat-{i:02d}: Feature {i}" for i in range(1, 7)]
    assert all((final / "features" / f"feat-{i:02d}.txt").is_file() for i in range(1, 7))
    assert git(final, "status", "--porcelain") == ""
    status = _status(final, fake_api)
    assert {fid: f["status"] for fid, f in status["features"].items()} == {f"feat-{i:02d}": "passed" for i in range(1, 7)}
    assert status["totals"]["costUsd"] == pytest.approx(sum(shard_costs))
    assert sum(f["costUsd"] for f in status["features"].values()) == pytest.approx(sum(shard_costs), rel=0.2)
    assert "feat-01: chose approach A" in (final / ".autonomous/context/key-decisions.json").read_text() or \
        "feat-01" in (final / ".autonomous/context/running-summary.json").read_text()
    assert (final / ".autonomous/logs/feat-06.json").is_file()

    fake_api.reset()
    after = run_cli(["run", str(spec)], final, fake_api)
    assert after.code == 0, after.stderr
    assert fake_api.calls == 0

    again = run_cli(["combine", str(spec), *map(str, artifacts)], final, fake_api)
    assert again.code == 0, again.stdout + again.stderr
    assert subjects(final, "main")[1:] == checkpoints
    assert _status(final, fake_api)["totals"]["costUsd"] == pytest.approx(sum(shard_costs))


def _events(project: Path, kind: str) -> list[dict]:
    return [event for event in read_events(project) if event["type"] == kind]


def test_a_shard_that_breaks_another_shards_feature_fails_the_combine(fake_api, tmp_path: Path) -> None:
    ids = [f"feat-{i:02d}" for i in range(1, 7)]
    shard_of = {fid: i for i in range(1, SHARDS + 1) for fid in select(ids, {f: [] for f in ids}, None, f"{i}/{SHARDS}")}
    # feat-06 edits README.md, which feat-01's check reads: the regression guard's affected set has
    # feat-01 when feat-06 lands. feat-03 adds a file feat-02's check only tests for absence (in
    # no footprint): the guard cannot know, final verification catches it.
    victim, culprit, quiet_victim, quiet_culprit = "feat-01", "feat-06", "feat-02", "feat-03"
    assert len({shard_of[victim], shard_of[culprit], shard_of[quiet_victim]}) == 3 and shard_of[quiet_culprit] == 3
    spec = write_spec(tmp_path, 6, extra={
        victim: {"verify": f"test -f features/{victim}.txt && grep -q widget README.md || "
                           "{ echo 'Error: README.md lost its widget'; exit 1; }"},
        quiet_victim: {"verify": f"test -f features/{quiet_victim}.txt && ! test -e features/poison.txt || "
                                 "{ echo 'Error: features/poison.txt must not exist'; exit 1; }"},
    })
    fake_api.plans[culprit] = [
        [edit_create(f"features/{culprit}.txt", "done\n"), edit_str_replace("README.md", "widget", "gadget")],
        [report(f"Implemented {culprit}")],
    ]
    fake_api.plans[quiet_culprit] = [
        [edit_create(f"features/{quiet_culprit}.txt", "done\n"), edit_create("features/poison.txt", "oops\n")],
        [report(f"Implemented {quiet_culprit}")],
    ]
    remote = _remote(tmp_path)
    artifacts = _shard_jobs(fake_api, tmp_path, remote, spec)
    final = clone(remote, tmp_path / "combine")

    combined = run_cli(["combine", str(spec), *map(str, artifacts), "--report", str(tmp_path / "r.json"),
                        "--junit", str(tmp_path / "c.xml")], final, fake_api)

    assert combined.code == 1, combined.stdout + combined.stderr
    assert f"{culprit}: it breaks the check of {victim}" in combined.stderr
    assert f"{quiet_victim}: its check fails on the combined tree" in combined.stderr
    # Each failed check's first meaningful line, wherever it ran (issue 41): final verification, the guard.
    assert "| Error: features/poison.txt must not exist" in combined.stdout + combined.stderr
    assert (final / "README.md").read_text() == "widget\n"
    assert f"orchestrate: {culprit}: Feature 6" not in subjects(final, "main")
    data = read_json(tmp_path / "r.json")
    statuses = {f["id"]: f["status"] for f in data["features"]}
    assert statuses[culprit] == "failed" and statuses[victim] == "passed" and statuses[quiet_victim] == "regressed"
    assert data["exitCode"] == 1
    junit = (tmp_path / "c.xml").read_text()
    assert junit.count("<failure") == 2 and "it breaks the check of feat-01" in junit

    merges = {event["id"]: event for event in _events(final, "merge")}
    assert set(merges) == set(ids)
    assert merges[culprit]["result"] == "recheck_failed" and merges[culprit]["attempt"] == 1
    assert all(merges[fid]["result"] == "merged" and merges[fid]["sha"] for fid in ids if fid != culprit)
    rechecks = _events(final, "regression_check")
    assert [(e["id"], e["checked"], e["success"]) for e in rechecks] == [(culprit, victim, False)]
    assert "README.md lost its widget" in rechecks[0]["output"]
    [final_check] = _events(final, "final_verification")
    assert final_check["failed"] == [quiet_victim] and final_check["checked"] == 5
    assert "poison.txt must not exist" in final_check["failures"][0]["output"]
    assert "Error: features/poison.txt must not exist" in junit and "Error: features/poison.txt" in (
        final / f".autonomous/logs/{quiet_victim}.json").read_text()
    page = run_cli(["report", "--html", str(tmp_path / "r.html")], final, fake_api)
    assert page.code == 0, page.stderr
    html = (tmp_path / "r.html").read_text()
    assert "<h2>Merges</h2><p>5 of 6 merge(s) landed." in html and f"{culprit}: it breaks the check of {victim}" in html
    assert f"4 of 5 check(s) pass on the final tree; regressed: {quiet_victim}" in html

    again = run_cli(["combine", str(spec), *map(str, artifacts)], final, fake_api)
    assert again.code == 1
    assert len(subjects(final, "main")) == 1 + 5
