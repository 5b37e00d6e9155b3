"""Shared fixtures: an isolated environment for every test, the fake API, a CLI runner."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from tests.fake_api_fixtures import fake_api_env, running_fake_api
from tests.fsync_counter import FsyncCounter

# The suite's sandbox: `ORCHESTRATE_SANDBOX=bwrap python3 -m pytest` runs every CLI test with
# bubblewrap required; unset, the CLI's own default (auto) applies.
SUITE_SANDBOX = os.environ.get("ORCHESTRATE_SANDBOX")


@pytest.fixture(autouse=True)
def default_signal_handling():
    """Every test starts with Python's own Ctrl-C and SIGTERM handling and no signal blocked, and
    a test that leaves them otherwise fails. Once (the full suite, 2026-11-26) something run
    in-process left SIGINT ignored on a worker: the interrupt tests that came after it, and every
    process they started, no longer heard Ctrl-C. It did not happen again in the next full runs
    with this check in place; if it does, the test that did it is the one that fails."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    yield
    left = {"SIGINT": signal.getsignal(signal.SIGINT), "SIGTERM": signal.getsignal(signal.SIGTERM),
            "blocked": signal.pthread_sigmask(signal.SIG_BLOCK, [])}
    assert left == {"SIGINT": signal.default_int_handler, "SIGTERM": signal.SIG_DFL, "blocked": set()}, (
        f"this test left signal handling changed: {left}")


@pytest.hookimpl(optionalhook=True)  # without xdist (`-p no:xdist`) there is no such hook
def pytest_xdist_auto_num_workers(config):
    """`-n auto`: one and a half workers per core (at least 2). The end-to-end tests wait on the
    processes they start for a third of their time (the full suite used 140% of 2 cores with 2
    workers, 192% with 3), so a third worker fills that time."""
    return max(2, (os.cpu_count() or 1) * 3 // 2)


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path_factory, monkeypatch):
    """No real key, no real home: nothing a test does reaches the user's files or the API, and
    no plugin of the suite's loads in a pytest a test starts."""
    for name in list(os.environ):
        if name.startswith(("ANTHROPIC_", "ORCHESTRATE_")) or name == "GITHUB_STEP_SUMMARY":
            monkeypatch.delenv(name, raising=False)
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    # The pytest the tests' checks start loads no plugin this environment installed (hypothesis
    # alone takes a second to import; a check's pytest starts in a fifth of the time). Checks
    # are the user's, and nothing here depends on the suite's own plugins; the test of the batched
    # pytest run (`test_check_batch_e2e`) runs with them loaded, as in a user's virtualenv.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # The slow tests first (the stable sort keeps everything else's order). Under `--dist worksteal`
    # (pyproject.toml) each worker takes a contiguous share and an idle one steals from the end of
    # another's: the long tests start early and the tail is short ones. Contiguous shares also keep
    # a module's tests that share one expensive run (a module-scoped fixture: textkit_run,
    # hostile_run, demo_run) on one worker, so that run is not repeated on the other.
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
