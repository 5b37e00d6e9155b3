"""The sandbox's settings and the bwrap command line it builds: no bubblewrap needed."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from orchestrator.config import ConfigError
from orchestrator.config_layers import load_config, setting_origins
from orchestrator.safety.bubblewrap.sandbox import NO_SANDBOX, Sandbox, SandboxUnavailable, choose_sandbox
from orchestrator.safety.bubblewrap.stand_in import StandIn


def test_the_sandbox_table_gives_the_mode_and_its_options(tmp_path: Path) -> None:
    (tmp_path / "orchestrate.toml").write_text('[sandbox]\nmode = "none"\nread = ["/data"]\nwrite = ["out"]\nnetwork = true\n')
    config = load_config({}, tmp_path, {})
    assert config.sandbox == "none"
    assert config.sandbox_options.read == ["/data"] and config.sandbox_options.write == ["out"]
    assert config.sandbox_options.network is True
    assert setting_origins({}, tmp_path, {})["sandbox"] == "orchestrate.toml"


def test_a_plain_sandbox_key_and_the_layers_above_it(tmp_path: Path) -> None:
    (tmp_path / "orchestrate.toml").write_text('sandbox = "none"\n')
    assert load_config({}, tmp_path, {}).sandbox == "none"
    assert load_config({}, tmp_path, {"ORCHESTRATE_SANDBOX": "bwrap"}).sandbox == "bwrap"
    assert load_config({"sandbox": "auto"}, tmp_path, {"ORCHESTRATE_SANDBOX": "bwrap"}).sandbox == "auto"
    origins = setting_origins({"sandbox": "auto"}, tmp_path, {"ORCHESTRATE_MAX_TURNS": "3"})
    assert origins["sandbox"] == "command line" and origins["max_turns"] == "environment"
    assert origins["context"] == "default"


def test_a_bad_sandbox_table_names_it_as_the_user_wrote_it(tmp_path: Path) -> None:
    (tmp_path / "orchestrate.toml").write_text('[sandbox]\nreed = ["/data"]\nnetwork = "maybe"\n')
    with pytest.raises(ConfigError) as caught:
        load_config({}, tmp_path, {})
    message = str(caught.value)
    assert "sandbox.reed" in message and 'did you mean "read"' in message and "sandbox.network" in message


def test_a_bad_mode_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="ORCHESTRATE_SANDBOX"):
        load_config({}, tmp_path, {"ORCHESTRATE_SANDBOX": "docker"})
    with pytest.raises(SandboxUnavailable):
        choose_sandbox("docker", tmp_path)


def test_without_a_sandbox_the_command_is_left_alone(tmp_path: Path) -> None:
    assert NO_SANDBOX.wrap(["bash", "-c", "true"], tmp_path) == ["bash", "-c", "true"]
    assert choose_sandbox("none", tmp_path).active is False


def test_bwrap_missing_warns_under_auto_and_stops_bwrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap anywhere
    chosen = choose_sandbox("auto", tmp_path)
    assert not chosen.active and chosen.warning and "apt-get install bubblewrap" in chosen.warning
    with pytest.raises(SandboxUnavailable, match=r"not installed.*--sandbox none"):
        choose_sandbox("bwrap", tmp_path)


def _mounts(argv: list[str]) -> list[tuple[str, str]]:
    """(flag, path) of each mount after the root one, in order."""
    found = []
    for index, flag in enumerate(argv):
        if flag in ("--tmpfs", "--ro-bind", "--bind") and argv[index + 1] != "/":
            found.append((flag, argv[index + 1]))
    return found


def test_the_mounts_hide_home_and_tmp_then_open_the_project_then_close_its_state(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "home" / "code" / "app"
    (project / ".git").mkdir(parents=True)
    (project / ".autonomous").mkdir()
    (home / ".pyenv").mkdir()
    cache = home / ".cache"
    cache.mkdir()
    sandbox = Sandbox("bwrap", "test", hidden=(home,), read=(home / ".pyenv",), write=(cache,))
    argv = sandbox.wrap(["bash", "-c", "true"], project)
    mounts = _mounts(argv)
    assert mounts.index(("--tmpfs", str(home))) < mounts.index(("--bind", str(project)))
    assert mounts.index(("--bind", str(project))) < mounts.index(("--ro-bind", str(project / ".git")))
    assert ("--ro-bind", str(project / ".autonomous")) in mounts and ("--bind", str(cache)) in mounts
    assert ("--ro-bind", str(home / ".pyenv")) in mounts
    assert "--unshare-net" in argv and "--unshare-pid" in argv and "--die-with-parent" in argv
    assert argv[-4:] == ["--", "bash", "-c", "true"]
    networked = Sandbox("bwrap", "test", network=True).wrap(["true"], project)
    assert "--unshare-net" not in networked


@pytest.mark.parametrize("network", [False, True], ids=["no network", "network"])
@pytest.mark.parametrize("nests", [False, True], ids=["command", "nesting"])
@pytest.mark.parametrize("euid", [0, 1000], ids=["root", "user"])
def test_every_sandbox_drops_every_capability_and_installs_the_filter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, network: bool, nests: bool, euid: int,
) -> None:
    """Started by root, bwrap would keep them all: `--cap-drop ALL` in each variant, before the command."""
    monkeypatch.setattr("os.geteuid", lambda: euid)
    argv = Sandbox("bwrap", "test", network=network).wrap(["true"], tmp_path, nests=nests)
    bwrap = argv[4:argv.index("--")]  # after `/bin/sh -c 'exec "$@" 9<"$0"' FILTER`
    assert argv[4] == "bwrap" and bwrap[1:3] == ["--seccomp", "9"]
    assert ("--cap-drop", "ALL") in itertools.pairwise(bwrap)
    # Root's nesting sandbox runs as another uid (root with no capability may not map uid 0 again).
    assert ("--uid" in bwrap) == (nests and euid == 0)
    assert Path(argv[3]).name == ("nesting.bpf" if nests else "sandbox.bpf")
def _binds(argv: list[str]) -> list[tuple[str, str, str]]:
    """(flag, source, destination) of each bind after the root one, in order."""
    return [(flag, argv[i + 1], argv[i + 2]) for i, flag in enumerate(argv)
            if flag in ("--ro-bind", "--bind") and argv[i + 1] != "/"]


def test_a_verification_checkout_is_mounted_where_the_live_repository_is_and_nothing_live_on_top(tmp_path: Path) -> None:
    live, checkout, outside = tmp_path / "live", tmp_path / "checkout", tmp_path / "acceptance"
    for directory in (live / "specs", live / ".git", checkout / "app", outside):
        directory.mkdir(parents=True)
    (checkout / "app/orchestrate.toml").write_text("")
    sandbox = Sandbox("bwrap", "test", read=(live / "specs", outside), write=(live / "out",))
    (live / "out").mkdir()
    (live / "app/.venv").mkdir(parents=True)
    shared = ((live / "app/.venv", checkout / "app/.venv"),)
    argv = sandbox.wrap(["true"], checkout / "app", stand_in=StandIn(checkout, live, shared))
    binds = _binds(argv)
    assert ("--bind", str(checkout), str(live)) in binds
    # an ignored directory no run touched: the live one, read-only, at its place in the checkout
    assert ("--ro-bind", str(live / "app/.venv"), str(live / "app/.venv")) in binds
    binds.remove(("--ro-bind", str(live / "app/.venv"), str(live / "app/.venv")))
    assert ("--ro-bind", str(checkout / "app/orchestrate.toml"), str(live / "app/orchestrate.toml")) in binds
    assert ("--ro-bind", str(outside), str(outside)) in binds  # outside the project: as before
    assert all(not destination.startswith(str(live) + "/") or source.startswith(str(checkout))
               for _, source, destination in binds), binds  # the spec's directory, `.git`, `out`: not mounted
    assert argv[argv.index("--chdir") + 1] == str(live / "app")


def test_a_path_is_hidden_under_a_home_or_tmp_and_private_in_a_homes_secret_directories(tmp_path: Path) -> None:
    home = tmp_path / "home"
    sandbox = Sandbox("bwrap", "test", hidden=(home,), read=(home / ".pyenv",))
    assert sandbox.hides(home / ".ssh/id") == "private" and sandbox.hides(home / "acceptance/t.py") == "hidden"
    assert sandbox.hides(home / ".pyenv/bin/python") is None and sandbox.hides(Path("/usr/bin/env")) is None
    assert sandbox.hides(Path("/tmp/x/test_x.py")) == "hidden"
    assert NO_SANDBOX.hides(home / ".ssh/id") is None
