"""The shipped `examples/github/shards.yml`, run: its shard jobs' and combine job's `run:` steps
execute on this machine (tests/workflow_runner.py), against a bare repository standing in for
GitHub's and the fake API. A re-run of a shard job then resumes from its own artifact."""

from __future__ import annotations

import fnmatch
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli_helpers import REPO_ROOT, TEST_KEY, cli_env, read_json, write_spec
from tests.git_helpers import clone, git, init_repo, subjects
from tests.workflow_runner import Job, load_workflow

pytestmark = [pytest.mark.skipif(shutil.which("git") is None or shutil.which("bash") is None,
                                 reason="git and bash are needed"), pytest.mark.slow]
WORKFLOW = REPO_ROOT / "examples" / "github" / "shards.yml"


class Runners:
    """What GitHub gives the jobs: the remote, an artifact store, a fresh workspace per job."""

    def __init__(self, tmp_path: Path, fake_api: Any) -> None:
        self.tmp, self.fake = tmp_path, fake_api
        self.workflow = load_workflow(WORKFLOW)
        spec = write_spec(tmp_path, 6)
        seed = init_repo(tmp_path / "seed", {"README.md": "widget\n", self.workflow["env"]["SPEC"]: spec.read_text()})
        self.remote = tmp_path / "remote.git"
        git(tmp_path, "clone", "-q", "--bare", str(seed), str(self.remote))
        self.store = tmp_path / "store"
        self.store.mkdir()
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        shim = bin_dir / "orchestrate"
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m orchestrator "$@"\n')
        shim.chmod(0o755)
        gh = bin_dir / "gh"  # `gh pr create`: keeps the body it was given
        gh.write_text(f'#!/bin/sh\nwhile [ $# -gt 0 ]; do [ "$1" = --body-file ] && cp "$2" "{tmp_path}/pr-body.md"; shift; done\n')
        gh.chmod(0o755)
        self.path = f"{bin_dir}:{cli_env()['PATH']}"
        self.jobs = 0

    def job(self, name: str, **values: str) -> Job:
        self.jobs += 1
        workspace = self.tmp / f"runner-{self.jobs}-{name}"
        given = {"secrets.ANTHROPIC_API_KEY": TEST_KEY, "github.token": "not-used", "github.ref_name": "main",
                 "github.run_id": "7", "inputs.open_pr": "false", **values}
        env = cli_env(self.fake, key=None, PATH=self.path, GITHUB_STEP_SUMMARY=str(self.tmp / f"summary-{self.jobs}.md"))
        actions = {
            "actions/checkout": lambda _step, job: bool(clone(self.remote, job.workspace)),
            "actions/setup-python": lambda _step, _job: True,
            "actions/download-artifact": self._download,
            "actions/upload-artifact": self._upload,
            "actions/cache/save": lambda step, job: all((job.workspace / p).exists() for p in step["with"]["path"].split()),
        }
        return Job(self.workflow, name, workspace, given, env, actions)

    def _download(self, step: dict[str, Any], job: Job) -> bool:
        options = step["with"]
        target = job.workspace / options["path"]
        if "name" in options:  # one artifact, into `path`
            source = self.store / job.expand(options["name"])
            if not source.is_dir():
                return False
            shutil.copytree(source, target)
            return True
        for source in sorted(self.store.iterdir()):  # a pattern: each into `path/<name>`
            if fnmatch.fnmatch(source.name, options["pattern"]):
                shutil.copytree(source, target / source.name)
        return True

    def _upload(self, step: dict[str, Any], job: Job) -> bool:
        options = step["with"]
        source, target = job.workspace / options["path"], self.store / job.expand(options["name"])
        if not source.is_dir():
            return False
        if target.exists():
            assert options.get("overwrite"), f"{target.name} uploaded twice without overwrite"
            shutil.rmtree(target)
        shutil.copytree(source, target)
        return True


def test_the_shards_workflow_builds_combines_pushes_and_resumes(fake_api, tmp_path: Path) -> None:
    runners = Runners(tmp_path, fake_api)

    for shard in ("1", "2", "3"):
        job = runners.job("shard", **{"matrix.shard": shard})
        assert job.run(), job.ran
        assert job.outcomes["previous"] == "failure"  # no earlier artifact: continue-on-error, not a failure
    combine = runners.job("combine", **{"inputs.open_pr": "true"})
    assert combine.run(), combine.ran

    assert combine.outcomes["combine"] == "success"
    pushed = subjects(runners.remote, runners.workflow["env"]["COMBINED"])[1:]
    assert sorted(pushed) == [f"orchestrate: feat-{i:02d}: Feature {i}" for i in range(1, 7)]
    report = read_json(runners.store / "orchestrate-combined" / "report.json")
    assert report["exitCode"] == 0 and report["totals"]["passed"] == 6
    assert "<testsuite" in (runners.store / "orchestrate-combined" / "junit.xml").read_text()
    assert "(6/6 passed)" in (tmp_path / f"summary-{runners.jobs}.md").read_text()
    assert [name for name, _ in combine.ran] == ["Combine, re-check and verify", "Push the combined branch",
                                                 "Open a pull request"]
    body = (tmp_path / "pr-body.md").read_text()  # the step summary's Markdown, not the JUnit XML
    assert "(6/6 passed)" in body and "<testsuite" not in body and "|" in body

    fake_api.reset()
    rerun = runners.job("shard", **{"matrix.shard": "2"})
    assert rerun.run(), rerun.ran
    assert rerun.outcomes["previous"] == "success" and [code for _, code in rerun.ran] == [0, 0, 0]
    assert fake_api.calls == 0  # the shard's own artifact carried its passes: nothing is rebuilt
