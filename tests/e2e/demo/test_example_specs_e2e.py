"""The example specs in `specs/` really run: their checks are honest (that the specs load and
each feature has a check of its own is `tests/unit/demo/test_example_specs.py`).

For every `specs/<name>/spec.json`:
- in an empty project directory every check fails (nothing is built yet), and leaves no file
  behind, neither in the project nor beside the spec;
- every check passes against a reference implementation: the checks can be satisfied. For
  `textkit` it is what the demo model builds (`orchestrator.demo.textkit_sources.final_tree`,
  which `test_demo_e2e` holds to what the demo really leaves); for another spec, a copy of
  `tests/data/<name>_reference/` when that exists (test data only).

The checks run exactly as a run runs them: the feature's own `verify` command through
`orchestrator.run.checks.running.check_command.run_check` (bash, the project as cwd, `ORCHESTRATE_SPEC_DIR` set), with
`python3` on PATH standing for the interpreter running these tests.
"""

from __future__ import annotations

import os
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from orchestrator.demo.textkit_sources import final_tree
from orchestrator.run.checks.running.check_command import run_check
from orchestrator.spec.load import LoadedSpec, load_spec
from shared_base.check_result import CheckResult
from tests.environments import unsandboxed
from tests.example_specs import ROOT, per_spec


@per_spec
def test_every_check_fails_in_an_empty_project(spec_path: Path, tmp_path: Path):
    loaded = load_spec(spec_path)
    project = tmp_path / "project"
    project.mkdir()
    before = _tree(spec_path.parent)
    results = _run_checks(loaded, project, tmp_path)
    passed = [fid for fid, result in results.items() if result.success]
    assert passed == [], f"checks that pass with nothing built: {passed}"
    for fid, result in results.items():
        assert result.exit_code not in (None, 0), f"{fid}: {result.error}\n{result.output}"
    assert list(project.iterdir()) == [], "a check left files in the project"
    assert _tree(spec_path.parent) == before, "a check left files beside the spec"


@per_spec
def test_every_check_passes_on_the_reference(spec_path: Path, tmp_path: Path):
    loaded = load_spec(spec_path)
    project = tmp_path / "project"
    _write_reference(spec_path.parent.name, project)
    results = _run_checks(loaded, project, tmp_path)
    failed = {fid: f"{r.error or ''}\n{r.output}" for fid, r in results.items() if not r.success}
    assert not failed, "\n\n".join(f"--- {fid}\n{text}" for fid, text in failed.items())


def _write_reference(name: str, project: Path) -> None:
    """The spec's reference implementation, written into `project` (skips when it has none)."""
    if name == "textkit":
        for relative, content in final_tree().items():
            (project / relative).parent.mkdir(parents=True, exist_ok=True)
            (project / relative).write_text(content, encoding="utf-8")
        return
    reference = ROOT / "tests" / "data" / f"{name}_reference"
    if not reference.is_dir():
        pytest.skip(f"no reference implementation in {reference.relative_to(ROOT)}")
    shutil.copytree(reference, project, ignore=shutil.ignore_patterns("__pycache__"))


def _run_checks(loaded: LoadedSpec, project: Path, scratch: Path) -> dict[str, CheckResult]:
    """Every feature's check, run in parallel as the orchestrator runs one."""
    env = dict(os.environ)
    env["ORCHESTRATE_SPEC_DIR"] = str(loaded.path.parent.resolve())
    env["PATH"] = f"{_python3_shim(scratch)}{os.pathsep}{env.get('PATH', '')}"
    features = loaded.spec.features

    def check(feature):
        command = loaded.spec.check_command(feature)
        return run_check(command, unsandboxed(project, env), attempt=1, timeout=120)

    with ThreadPoolExecutor(max_workers=min(8, len(features))) as pool:
        return dict(zip([f.id for f in features], pool.map(check, features), strict=False))


def _python3_shim(scratch: Path) -> Path:
    """A directory whose `python3` is this interpreter (a script, not a symlink: a symlink to
    a virtualenv's python would lose the virtualenv, and pyenv shims need the real HOME)."""
    bin_dir = scratch / "bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "python3"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    return bin_dir


def _tree(directory: Path) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))
