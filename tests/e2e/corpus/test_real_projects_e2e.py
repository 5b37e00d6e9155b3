"""Real projects, rebuilt against their own test suites (issue 41): four open-source Python
libraries with different build habits, two of their functions stubbed out, the scripted agent
restoring them feature by feature, each feature checked by the project's own tests for that
function. Every run exits 0, with no false regression, under `--jobs 1` and `--jobs 3`; then
every feature's check passes on a fresh clone of the final commit with the project's usual set-up.

- six 1.16.0: one module at the top, `setup.py`, and an editable install's `six.egg-info` in the
  tree (ignored, made before the run); its version check reads it through `importlib.metadata`.
- tabulate 0.9.0: setuptools-scm writes `tabulate/version.py` (ignored, made before the run).
- cachetools 5.3.3: a `src/` layout with a declarative `setup.cfg`; its checks put `src` first on
  the path the environment has (`PYTHONPATH=src:$PYTHONPATH`).
- markupsafe 2.1.5: a `src/` layout with an optional C extension, `_speedups`, built in place
  (`setup.py build_ext --inplace`: an ignored `*.so`); its own tests run against both the C and
  the pure-Python implementation. Without a C compiler setup.py falls back to pure Python: the
  test then runs that path and says so in a warning (`.ci/run` installs gcc where it can).

A project's environment check (six's version, markupsafe's compiled module) is part of its first
feature's check, so the `--jobs 3` workers' worktrees must carry the ignored files too. The
whole-suite feature runs under `--jobs 1` only (it proves nothing more under `--jobs 3`, and is
each run's dearest check).

Cheap by construction, so the suite stays fast: each project is prepared (unpacked, committed,
stubbed, set up) once per test process and copied for each run; checks start pytest without
the plugins installed in this environment (`PYTEST_DISABLE_PLUGIN_AUTOLOAD=1`, as the example
spec's checks do); the source distributions come from the registry through pip once (`pip
download --no-deps --no-binary :all:`), pinned, cached under the temporary directory
(`orchestrate-test-sdists`); without the registry the tests are skipped, saying so. six,
tabulate and cachetools are MIT-licensed, markupsafe BSD-3-Clause.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from fake_messages_api.scripted_agent.plans import edit_str_replace, report
from tests.cli_helpers import read_events, read_json, run_cli
from tests.git_helpers import init_repo

pytestmark = pytest.mark.slow

# Written by the editable install / setuptools-scm before the run, and ignored as real projects do.
IGNORED = "__pycache__/\n*.py[co]\n*.egg-info/\n.pytest_cache/\nbuild/\ndist/\n"
SIX_VERSION_CHECK = "python3 -c \"import importlib.metadata as m; assert m.version('six') == '1.16.0'\""


@dataclass(frozen=True)
class Stub:
    """A function taken out of `path` (`Class.method` or `function`), and its tests' check."""

    path: str
    name: str
    check: str
    after: tuple[int, ...] = ()  # the stubs (by index) its tests also call: the spec's `depends_on`


@dataclass(frozen=True)
class Corpus:
    name: str
    version: str
    stubs: tuple[Stub, ...]
    whole_suite: str
    set_up: tuple[str, ...] = ()  # the project's usual set-up, run in the project before the run and in a fresh clone
    ignored: str = ""  # more .gitignore lines
    archive: str = ""  # the sdist's file name, when not `<name>-<version>.tar.gz`
    with_suite: bool = True  # the whole-suite feature (`--jobs 1` only)

    @property
    def feature_ids(self) -> list[str]:
        suite = [f"{self.name}-suite"] if self.with_suite else []
        return [f"{self.name}-{index + 1}" for index in range(len(self.stubs))] + suite

    @property
    def checks(self) -> list[str]:
        return [stub.check for stub in self.stubs] + ([self.whole_suite] if self.with_suite else [])


# No plugin of this environment's (hypothesis, xdist) loads: pytest starts in a third of the time.
PYTEST = "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python3 -m pytest -q -p no:cacheprovider"
# A bare `PYTHONPATH=src` would drop the path orchestrate's pytest probe is on (pytest exits 4).
SRC = "PYTHONPATH=src:$PYTHONPATH"
SPEEDUPS_CHECK = f"{SRC} python3 -c 'import markupsafe._speedups'"
CORPORA = {
    "six": Corpus(
        "six", "1.16.0",
        (Stub("six.py", "add_metaclass", f"{SIX_VERSION_CHECK} && {PYTEST} test_six.py -k add_metaclass"),
         Stub("six.py", "with_metaclass", f"{PYTEST} test_six.py -k with_metaclass")),
        # dbm.ndbm is not built into this machine's Python: six's own test of it cannot pass here.
        whole_suite=f"{SIX_VERSION_CHECK} && {PYTEST} test_six.py -k 'not dbm_ndbm'",
        set_up=(f"{sys.executable} setup.py -q egg_info",),
    ),
    "tabulate": Corpus(
        "tabulate", "0.9.0",
        (Stub("tabulate/__init__.py", "_remove_separating_lines",
              f"{PYTEST} test/test_internal.py -k remove_separating_lines"),
         Stub("tabulate/__init__.py", "_reinsert_separating_lines",  # its test removes them first
              f"{PYTEST} test/test_internal.py -k reinsert_separating_lines", after=(0,))),
        whole_suite=f"{PYTEST} test",
        ignored="tabulate/version.py\n",
    ),
    "cachetools": Corpus(
        "cachetools", "5.3.3",
        (Stub("src/cachetools/__init__.py", "LRUCache.popitem", f"{SRC} {PYTEST} tests/test_lru.py"),
         Stub("src/cachetools/keys.py", "typedkey", f"{SRC} {PYTEST} tests/test_keys.py -k typed")),
        whole_suite=f"{SRC} {PYTEST} tests",
    ),
    "markupsafe": Corpus(
        "markupsafe", "2.1.5",
        # Its escape tests run against both implementations: `_native` (stubbed) and the compiled `_speedups`.
        (Stub("src/markupsafe/_native.py", "escape", f"{SPEEDUPS_CHECK} && {SRC} {PYTEST} tests/test_escape.py"),
         Stub("src/markupsafe/__init__.py", "Markup.unescape", f"{SRC} {PYTEST} tests/test_markupsafe.py -k unescape")),
        whole_suite=f"{SPEEDUPS_CHECK} && {SRC} {PYTEST} tests",
        set_up=(f"{sys.executable} setup.py -q build_ext --inplace",),
        ignored="*.so\n", archive="MarkupSafe-2.1.5.tar.gz",
    ),
}


# ---- the source distributions -----------------------------------------------------------------


def sdist(tmp_path: Path, corpus: Corpus) -> Path:
    """The pinned source distribution, from the cache or fetched by pip; skipped without the registry."""
    # Not under HOME: the suite gives each test a HOME of its own.
    cache = Path(os.environ.get("ORCHESTRATE_TESTS_SDIST_CACHE") or Path(tempfile.gettempdir(), "orchestrate-test-sdists"))
    wanted = cache / (corpus.archive or f"{corpus.name}-{corpus.version}.tar.gz")
    if wanted.is_file():
        return wanted
    download = tmp_path / "download"
    fetched = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "--disable-pip-version-check",
         "-d", str(download), f"{corpus.name}=={corpus.version}"],
        capture_output=True, text=True, timeout=600, check=False,
    )
    if fetched.returncode != 0 or not (download / wanted.name).is_file():
        last = (fetched.stderr.strip().splitlines() or ["no output"])[-1]
        pytest.skip(f"pip could not fetch {corpus.name}=={corpus.version} from the package registry: {last}")
    cache.mkdir(parents=True, exist_ok=True)
    os.replace(download / wanted.name, wanted)  # whole or not at all: another worker may be reading it
    return wanted


def unpack(archive: Path, into: Path) -> Path:
    """The archive's one top directory, unpacked as `into`."""
    with tarfile.open(archive) as tar:
        tar.extractall(into.parent / "unpacked", filter="data")
    [top] = (into.parent / "unpacked").iterdir()
    top.rename(into)
    return into


# ---- stubbing ---------------------------------------------------------------------------------


def _find(tree: ast.Module, name: str) -> ast.FunctionDef:
    scope: list[ast.stmt] = tree.body
    *classes, function = name.split(".")
    for class_name in classes:
        scope = next(n for n in scope if isinstance(n, ast.ClassDef) and n.name == class_name).body
    return next(n for n in scope if isinstance(n, ast.FunctionDef) and n.name == function)


def stub_out(project: Path, stubs: tuple[Stub, ...]) -> dict[str, tuple[str, str]]:
    """Replace each function's body (its docstring kept) by a `raise`; per stub name, the
    (stub line, original body) the agent's edit swaps back."""
    swaps: dict[str, tuple[str, str]] = {}
    for path in dict.fromkeys(stub.path for stub in stubs):
        lines = (project / path).read_text().splitlines(keepends=True)
        tree = ast.parse("".join(lines))
        found = [(stub, _find(tree, stub.name)) for stub in stubs if stub.path == path]
        for stub, node in sorted(found, key=lambda pair: -pair[1].lineno):
            body = node.body[1:] if ast.get_docstring(node) is not None else node.body
            start, end = body[0].lineno - 1, node.end_lineno or body[-1].lineno
            indent = lines[start][: len(lines[start]) - len(lines[start].lstrip())]
            stub_line = f'{indent}raise NotImplementedError("stub: {stub.name}")'
            swaps[stub.name] = (stub_line, "".join(lines[start:end]).rstrip("\n"))
            lines[start:end] = [stub_line + "\n"]
        (project / path).write_text("".join(lines))
    return swaps


# ---- the project, the spec, the run -----------------------------------------------------------


def shell(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True, timeout=600, check=False)


_PREPARED: dict[str, tuple[Path, dict[str, tuple[str, str]]]] = {}


def prepare(corpus: Corpus, factory: pytest.TempPathFactory) -> tuple[Path, dict[str, tuple[str, str]]]:
    """The project as a developer has it: released source committed, then the stubs committed, and the
    usual set-up done (its ignored files left in the tree). Made once per test process; each run
    gets a copy (`copy_of`)."""
    if corpus.name in _PREPARED:
        return _PREPARED[corpus.name]
    base = factory.mktemp(f"prepared-{corpus.name}")
    project = unpack(sdist(base, corpus), base / corpus.name)
    for leftover in [*project.glob("*.egg-info"), *project.glob("src/*.egg-info")]:
        shutil.rmtree(leftover)  # the sdist's own; the set-up below makes the editable install's
    (project / ".gitignore").write_text(IGNORED + corpus.ignored)
    init_repo(project, {".gitignore": IGNORED + corpus.ignored})
    swaps = stub_out(project, corpus.stubs)
    subprocess.run(["git", "commit", "-qam", "stub out the functions to rebuild"], cwd=project, check=True)
    for command in corpus.set_up:
        done = shell(command, project)
        assert done.returncode == 0, done.stdout + done.stderr
    _PREPARED[corpus.name] = project, swaps
    return project, swaps


def copy_of(prepared: Path, into: Path) -> Path:
    """A copy of the prepared project, ignored files included (made now: before the run, the user's)."""
    return Path(shutil.copytree(prepared, into / prepared.name, symlinks=True))


def with_compiled_speedups(corpus: Corpus, project: Path) -> Corpus:
    """markupsafe as built here: without a C compiler its set-up falls back to pure Python, and its
    checks then cannot ask for the compiled module. Says which path the run exercises."""
    if corpus.name != "markupsafe" or list((project / "src/markupsafe").glob("_speedups*.so")):
        return corpus
    warnings.warn("markupsafe: no compiled _speedups was built here (no C compiler?): this run exercises "
                  "its pure-Python fallback only, not a carried compiled extension", stacklevel=2)
    stubs = tuple(replace(stub, check=stub.check.replace(f"{SPEEDUPS_CHECK} && ", "")) for stub in corpus.stubs)
    return replace(corpus, stubs=stubs, whole_suite=corpus.whole_suite.replace(f"{SPEEDUPS_CHECK} && ", ""))


def write_spec(corpus: Corpus, directory: Path) -> Path:
    ids = corpus.feature_ids
    features: list[dict[str, Any]] = [
        {"id": fid, "name": f"Restore {stub.name}", "category": corpus.name,
         "description": f"Restore `{stub.name}` in {stub.path} so that the project's own tests of it pass.",
         "verify": stub.check, "depends_on": [ids[index] for index in stub.after]}
        for fid, stub in zip(ids, corpus.stubs, strict=False)
    ]
    if corpus.with_suite:
        features.append({"id": ids[-1], "name": "The whole suite", "category": corpus.name, "depends_on": ids[:-1],
                         "description": f"{corpus.name}'s whole test suite passes.", "verify": corpus.whole_suite})
    path = directory / f"{corpus.name}-spec.json"
    path.write_text(json.dumps({"project": corpus.name, "features": features}, indent=2))
    return path


def scripted_agent(fake_api: Any, corpus: Corpus, swaps: dict[str, tuple[str, str]]) -> None:
    """Each feature's agent puts its function's body back; the whole-suite feature's has nothing to do."""
    for fid, stub in zip(corpus.feature_ids, corpus.stubs, strict=False):
        stub_line, original = swaps[stub.name]
        fake_api.plans[fid] = [[edit_str_replace(stub.path, stub_line, original)], [report(f"Restored {stub.name}")]]
    if corpus.with_suite:
        fake_api.plans[corpus.feature_ids[-1]] = [[report("The whole suite passes")]]


def _checks_pass_on_a_fresh_clone(project: Path, corpus: Corpus, tmp_path: Path) -> None:
    fresh = tmp_path / "fresh"
    subprocess.run(["git", "clone", "-q", str(project), str(fresh)], check=True)
    for command in corpus.set_up:
        assert shell(command, fresh).returncode == 0
    for command in corpus.checks:
        done = shell(command, fresh)
        assert done.returncode == 0, f"{command}:\n{done.stdout[-3000:]}{done.stderr[-2000:]}"


def _rebuild(fake_api: Any, tmp_path: Path, factory: pytest.TempPathFactory, corpus: Corpus, jobs: str) -> None:
    prepared, swaps = prepare(corpus, factory)
    corpus = with_compiled_speedups(corpus, prepared)
    if jobs == "1":  # each stub really breaks its check before the run (once: it costs a pytest run each)
        for stub in corpus.stubs:
            assert shell(stub.check, prepared).returncode != 0, stub
    else:
        corpus = replace(corpus, with_suite=False)
    project = copy_of(prepared, tmp_path)
    scripted_agent(fake_api, corpus, swaps)

    result = run_cli(["run", str(write_spec(corpus, tmp_path)), "--jobs", jobs], project, fake_api, timeout=900)

    assert result.code == 0, result.stdout + result.stderr
    state = read_json(project / ".autonomous/state/execution-state.json")
    assert {fid: entry["status"] for fid, entry in state["features"].items()} == dict.fromkeys(
        corpus.feature_ids, "passed")
    events = read_events(project)
    assert [e["checked"] for e in events if e["type"] == "regression_check" and not e["success"]] == []
    [final] = [e for e in events if e["type"] == "final_verification"]
    assert final["failed"] == [] and final["passed"] == final["checked"] == len(corpus.feature_ids)
    _checks_pass_on_a_fresh_clone(project, corpus, tmp_path)


@pytest.mark.parametrize("jobs", ["1", "3"])
@pytest.mark.parametrize("name", list(CORPORA))
def test_a_real_project_is_rebuilt_against_its_own_test_suite(
    fake_api: Any, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, name: str, jobs: str,
) -> None:
    _rebuild(fake_api, tmp_path, tmp_path_factory, CORPORA[name], jobs)
