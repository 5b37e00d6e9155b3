"""Shared fixtures: an isolated environment for every test, the fake API, a CLI runner."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.fake_api_fixtures import fake_api_env, running_fake_api
from tests.fsync_counter import FsyncCounter

# The suite's sandbox: `ORCHESTRATE_SANDBOX=bwrap python3 -m pytest` runs every CLI test with
# bubblewrap required; unset, the CLI's own default (auto) applies.
SUITE_SANDBOX = os.environ.get("ORCHESTRATE_SANDBOX")


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path_factory, monkeypatch):
    """No real key, no real home: nothing a test does reaches the user's files or the API."""
    for name in list(os.environ):
        if name.startswith(("ANTHROPIC_", "ORCHESTRATE_")) or name == "GITHUB_STEP_SUMMARY":
            monkeypatch.delenv(name, raising=False)
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    if SUITE_SANDBOX:
        monkeypatch.setenv("ORCHESTRATE_SANDBOX", SUITE_SANDBOX)


@pytest.fixture
def fake_api():
    with running_fake_api() as fake:
        yield fake


@pytest.fixture
def api_env(fake_api, monkeypatch):
    for name, value in fake_api_env(fake_api).items():
        monkeypatch.setenv(name, value)
    return fake_api


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project directory, `project/` under the test's own tmp_path."""
    root = tmp_path / "project"
    root.mkdir()
    return root


@pytest.fixture
def fsyncs(monkeypatch: pytest.MonkeyPatch) -> FsyncCounter:
    """Every `os.fsync` in this process counted by directory (and still done)."""
    counter = FsyncCounter()
    monkeypatch.setattr(os, "fsync", counter)
    return counter


# Module-scoped fixtures that run the CLI once for several tests (a whole textkit build, say).
# Each is one xdist group, so that run happens once, on one worker, instead of once on every
# worker that gets one of its tests (`--dist loadgroup` in pyproject.toml).
SHARED_RUNS = frozenset({"textkit_run", "hostile_run", "demo_run", "two_passed"})


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups into the test ids
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        shared = sorted(SHARED_RUNS.intersection(getattr(item, "fixturenames", ())))
        if shared:
            item.add_marker(pytest.mark.xdist_group(f"{item.nodeid.split('::')[0]}::{shared[0]}"))
    # The slow tests first: handed out one at a time as workers free up, the long ones no longer
    # start last on one worker while the other idles (the stable sort keeps the rest's order).
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
