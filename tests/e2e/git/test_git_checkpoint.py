"""A checkpoint commit per passed feature, never including the run's own state."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from orchestrator.git.checkpoint import commit_checkpoint, is_git_repo
from orchestrator.git.run_git import CheckpointError

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
REPO_ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def isolated_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads the real user's git configuration or identity."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / "gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "EMAIL"):
        monkeypatch.delenv(name, raising=False)
    for role in ("AUTHOR", "COMMITTER"):
        for part in ("NAME", "EMAIL"):
            monkeypatch.delenv(f"GIT_{role}_{part}", raising=False)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


def make_repo(path: Path, *, identity: bool = True) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q")
    if identity:
        git(path, "config", "user.name", "Dev Eloper")
        git(path, "config", "user.email", "dev@example.com")
    return path


def committed_files(repo: Path) -> list[str]:
    return git(repo, "ls-tree", "-r", "--name-only", "HEAD").splitlines()


def test_a_passed_feature_is_committed_with_its_message(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "project")
    (repo / "todo.py").write_text("class Todo: ...\n")

    sha = commit_checkpoint(repo, "orchestrate: todo-model passed")

    assert sha == git(repo, "rev-parse", "HEAD")
    assert git(repo, "log", "-1", "--format=%s|%an <%ae>") == (
        "orchestrate: todo-model passed|Dev Eloper <dev@example.com>"
    )
    assert committed_files(repo) == ["todo.py"]
    assert git(repo, "status", "--porcelain") == ""


def test_nothing_to_commit_gives_none(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "project")
    assert commit_checkpoint(repo, "empty repo") is None
    (repo / "a.txt").write_text("a\n")
    first = commit_checkpoint(repo, "first")
    assert first is not None
    assert commit_checkpoint(repo, "again") is None
    assert git(repo, "rev-parse", "HEAD") == first


def test_run_state_is_never_committed_and_gitignore_is_left_alone(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "project")
    (repo / ".gitignore").write_text("*.pyc\n")
    (repo / ".autonomous" / "state").mkdir(parents=True)
    (repo / ".autonomous" / "state" / "execution-state.json").write_text("{}\n")
    (repo / "app.py").write_text("print('hi')\n")

    assert commit_checkpoint(repo, "one") is not None
    (repo / "app.py").write_text("print('hello')\n")
    assert commit_checkpoint(repo, "two") is not None

    assert sorted(committed_files(repo)) == [".gitignore", "app.py"]
    assert (repo / ".gitignore").read_text() == "*.pyc\n"
    exclude = (repo / ".git" / "info" / "exclude").read_text()
    assert exclude.count("/.autonomous/") == 1
    assert git(repo, "status", "--porcelain") == ""


def test_state_dir_already_ignored_by_the_user_needs_no_exclude_entry(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "project")
    (repo / ".gitignore").write_text(".autonomous/\n")
    (repo / ".autonomous").mkdir()
    (repo / ".autonomous" / "events.jsonl").write_text("{}\n")
    assert commit_checkpoint(repo, "one") is not None
    assert committed_files(repo) == [".gitignore"]
    assert ".autonomous" not in (repo / ".git" / "info" / "exclude").read_text()


def test_a_project_inside_a_larger_repo_commits_only_its_own_files(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "monorepo")
    project = repo / "services" / "todo"
    (project / ".autonomous").mkdir(parents=True)
    (project / ".autonomous" / "events.jsonl").write_text("{}\n")
    (project / "todo.py").write_text("x = 1\n")
    (repo / "unrelated.txt").write_text("work in progress\n")
    (repo / "staged-by-user.txt").write_text("staged\n")
    git(repo, "add", "staged-by-user.txt")

    assert is_git_repo(project)
    assert commit_checkpoint(project, "todo passed") is not None

    assert committed_files(repo) == ["services/todo/todo.py"]
    assert git(repo, "status", "--porcelain").splitlines() == [
        "A  staged-by-user.txt",
        "?? unrelated.txt",
    ]


def test_commits_without_any_configured_identity(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "project", identity=False)
    # Refuse identities guessed from the host, as on a fresh CI machine.
    git(repo, "config", "user.useConfigOnly", "true")
    (repo / "a.txt").write_text("a\n")

    assert commit_checkpoint(repo, "first") is not None
    assert git(repo, "log", "-1", "--format=%an <%ae>") == "orchestrate <orchestrate@localhost>"


def test_a_plain_directory_is_not_a_repo(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert is_git_repo(plain) is False
    assert is_git_repo(tmp_path / "missing") is False
    with pytest.raises(CheckpointError, match="not a git repository"):
        commit_checkpoint(plain, "nope")


def test_without_git_installed_nothing_is_a_repo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "project")
    empty_bin = tmp_path / "empty-bin"
    empty_bin.mkdir()
    monkeypatch.setenv("PATH", str(empty_bin))
    assert is_git_repo(repo) is False
    with pytest.raises(CheckpointError, match="git is not installed"):
        commit_checkpoint(repo, "nope")


def test_checkpoints_run_no_hooks_and_git_sees_no_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A hook could have been planted by the agent; it must neither run nor see the key.
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-hook-test")
    repo = make_repo(tmp_path / "project")
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nenv > ../hook-ran.txt\nexit 1\n")
    hook.chmod(0o755)
    (repo / "a.txt").write_text("a\n")
    assert commit_checkpoint(repo, "checkpoint: a") is not None
    assert not (tmp_path / "hook-ran.txt").exists()

def test_checkpoints_never_push(tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    repo = make_repo(tmp_path / "project")
    git(repo, "remote", "add", "origin", str(remote))
    (repo / "a.txt").write_text("a\n")
    assert commit_checkpoint(repo, "local only") is not None
    assert git(remote, "for-each-ref") == ""
    assert os.listdir(remote / "refs" / "heads") == []


def test_an_exclude_file_that_is_a_link_is_not_written_through(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "project")
    outside = tmp_path / "bashrc"
    outside.write_text("export PS1='$ '\n")
    exclude = repo / ".git" / "info" / "exclude"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    exclude.unlink(missing_ok=True)
    exclude.symlink_to(outside)
    (repo / "todo.py").write_text("class Todo: ...\n")

    with pytest.raises(CheckpointError, match="symbolic link"):
        commit_checkpoint(repo, "orchestrate: todo-model passed")
    assert outside.read_text() == "export PS1='$ '\n"


# ---- .git/index.lock: never torn, never stale ---------------------------------------------


def git_running_in(repo: Path) -> bool:
    """Whether any git process works in `repo` now."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            comm = Path(f"/proc/{entry}/comm").read_text().strip()
            cwd = os.readlink(f"/proc/{entry}/cwd")
        except OSError:
            continue
        if comm == "git" and (cwd == str(repo) or cwd.startswith(f"{repo}/")):
            return True
    return False


def wait_for_no_git(repo: Path, seconds: float = 30.0) -> None:
    end = time.monotonic() + seconds
    while git_running_in(repo):
        assert time.monotonic() < end, "a git process never finished"
        time.sleep(0.02)


def test_a_stale_index_lock_is_removed_with_a_warning(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "project")
    (repo / "a.txt").write_text("a\n")
    (repo / ".git" / "index.lock").write_bytes(b"")  # what a git killed with -9 leaves
    warnings: list[str] = []

    assert commit_checkpoint(repo, "after a crash", on_warning=warnings.append) is not None

    assert committed_files(repo) == ["a.txt"]
    assert not (repo / ".git" / "index.lock").exists()
    assert len(warnings) == 1 and "index.lock" in warnings[0] and "killed" in warnings[0]


@pytest.mark.skipif(not Path("/proc/self/cwd").exists(), reason="needs Linux /proc")
def test_a_lock_held_by_a_running_git_is_waited_for_never_removed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "project")
    (repo / ".gitattributes").write_text("slow.txt filter=slow\n")
    (repo / "slow.txt").write_text("the user's own work\n")
    # The user's own `git add`, slowed by a filter given on its command line only.
    users_git = subprocess.Popen(["git", "-c", "filter.slow.clean=sleep 2; cat", "add", "slow.txt"], cwd=repo)
    try:
        end = time.monotonic() + 10
        while not (repo / ".git" / "index.lock").exists():
            assert users_git.poll() is None and time.monotonic() < end, "the user's git never took the lock"
            time.sleep(0.01)
        (repo / "a.txt").write_text("a\n")
        warnings: list[str] = []

        assert commit_checkpoint(repo, "checkpoint", on_warning=warnings.append) is not None

        assert users_git.wait(timeout=30) == 0, "the user's git lost its lock"
        assert warnings == []
    finally:
        if users_git.poll() is None:
            users_git.kill()
            users_git.wait()


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="needs Linux /proc")
def test_a_long_running_git_that_does_not_hold_the_lock_does_not_keep_it(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "project")
    (repo / ".git" / "index.lock").write_bytes(b"")
    # Editors and IDEs keep git processes running in the repository for hours.
    reader = subprocess.Popen(["git", "cat-file", "--batch"], cwd=repo, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    try:
        (repo / "a.txt").write_text("a\n")
        assert commit_checkpoint(repo, "checkpoint", on_warning=lambda message: None) is not None
    finally:
        reader.kill()
        reader.wait()


KILLED_CHECKPOINTS = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from orchestrator.git.checkpoint import commit_checkpoint

    repo, trial = Path(sys.argv[1]), sys.argv[2]
    print("ready", flush=True)
    round = 0
    while True:
        round += 1
        for index in range(150):
            (repo / f"file-{index:03d}.txt").write_text(f"trial {trial} round {round} file {index}\\n" * 40)
        commit_checkpoint(repo, f"trial {trial} round {round}")
    """
)


@pytest.mark.skipif(not Path("/proc/self/cwd").exists(), reason="needs Linux /proc")
@pytest.mark.slow
def test_random_kills_during_checkpoints_never_leave_an_index_lock_that_stops_the_next(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "project")
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    lock = repo / ".git" / "index.lock"
    trials, kills_mid_git, torn, failed = 0, 0, 0, []
    started = time.monotonic()
    while trials < 24 and time.monotonic() - started < 18:
        trials += 1
        run = subprocess.Popen(
            [sys.executable, "-c", KILLED_CHECKPOINTS, str(repo), str(trials)], env=env, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # the run leads its own process group, as in a terminal
        )
        assert run.stdout is not None and run.stdout.readline() == b"ready\n"
        # A random moment, then the next instant a git holds the lock: the worst time to die.
        time.sleep(random.uniform(0.0, 0.3))
        end = time.monotonic() + 5
        while not lock.exists() and time.monotonic() < end:
            pass
        kills_mid_git += lock.exists()
        # Alternately the whole process group killed (kill -9 -PGID), and Ctrl-C.
        if trials % 2:
            os.killpg(run.pid, signal.SIGKILL)
        else:
            run.send_signal(signal.SIGINT)
        run.wait(timeout=60)
        run.stdout.close()
        wait_for_no_git(repo)
        torn += lock.exists()
        (repo / "after.txt").write_text(f"after trial {trials}\n")
        try:
            commit_checkpoint(repo, f"after trial {trials}", on_warning=lambda message: None)
        except CheckpointError as err:
            failed.append(str(err))
            lock.unlink(missing_ok=True)  # so that the next trial tests anew
    print(f"\n{trials} kills during checkpoints ({kills_mid_git} while git held index.lock): "
          f"{torn} left a torn index.lock, {len(failed)} next checkpoint(s) failed")
    assert torn == 0
    assert failed == []
    assert git(repo, "status", "--porcelain") == ""


# ---- config the agent may have planted in the repository ---------------------------------


def spy(tmp_path: Path, name: str, *, passthrough: bool = True) -> tuple[str, Path]:
    """A command that leaves `<name>.ran` behind when git runs it (and copies stdin to stdout)."""
    ran = tmp_path / f"{name}.ran"
    script = tmp_path / f"{name}.sh"
    script.write_text(f"#!/bin/sh\ntouch {ran}\n{'cat' if passthrough else 'exit 1'}\n")
    script.chmod(0o755)
    return str(script), ran


def test_a_clean_filter_set_by_the_agent_neither_runs_nor_changes_the_committed_blob(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "project")
    command, ran = spy(tmp_path, "filter")
    git(repo, "config", "filter.evil.clean", f"{command} | sed s/verified/tampered/")
    git(repo, "config", "filter.evil.required", "true")
    (repo / ".gitattributes").write_text("*.txt filter=evil\n")
    (repo / "result.txt").write_bytes(b"verified output\r\n")

    assert commit_checkpoint(repo, "checkpoint") is not None

    committed = subprocess.run(["git", "cat-file", "blob", "HEAD:result.txt"], cwd=repo, capture_output=True).stdout
    assert committed == (repo / "result.txt").read_bytes()
    assert not ran.exists()


def test_config_included_from_a_project_file_is_ignored_too(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "project")
    command, ran = spy(tmp_path, "included")
    (repo / "settings.cfg").write_text(f'[filter "x"]\n\tclean = {command}\n[core]\n\tfsmonitor = {command}\n')
    git(repo, "config", "include.path", "../settings.cfg")
    (repo / ".gitattributes").write_text("* filter=x\n")
    (repo / "a.txt").write_text("a\n")

    assert commit_checkpoint(repo, "checkpoint") is not None
    assert not ran.exists()


@pytest.mark.parametrize(
    "settings, attributes",
    [
        ({"core.fsmonitor": "{spy}"}, ""),
        ({"commit.gpgSign": "true", "gpg.program": "{spy}"}, ""),
        ({"commit.gpgSign": "true", "gpg.format": "ssh", "gpg.ssh.program": "{spy}"}, ""),
        ({"diff.external": "{spy}"}, ""),
        ({"diff.x.textconv": "{spy}", "diff.x.command": "{spy}"}, "* diff=x\n"),
        ({"core.pager": "{spy}", "pager.diff": "{spy}"}, ""),
        ({"filter.x.process": "{spy}", "filter.x.required": "true"}, "* filter=x\n"),
        ({"core.hooksPath": "{hooks}"}, ""),
    ],
)
def test_repository_config_that_would_run_a_program_does_not(tmp_path: Path, settings, attributes) -> None:
    repo = make_repo(tmp_path / "project")
    command, ran = spy(tmp_path, "spy", passthrough=False)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for hook in ("pre-commit", "commit-msg", "post-commit", "pre-auto-gc"):
        (hooks / hook).write_text(f"#!/bin/sh\ntouch {ran}\nexit 1\n")
        (hooks / hook).chmod(0o755)
    for key, value in settings.items():
        git(repo, "config", key, value.format(spy=command, hooks=hooks))
    (repo / ".gitattributes").write_text(attributes)
    (repo / "a.txt").write_text("a\n")

    assert commit_checkpoint(repo, "checkpoint") is not None
    (repo / "a.txt").write_text("b\n")
    assert commit_checkpoint(repo, "checkpoint 2") is not None

    assert not ran.exists(), f"git ran the program set by {settings}"


def test_line_ending_conversion_set_in_the_repository_does_not_change_the_blob(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "project")
    git(repo, "config", "core.autocrlf", "true")
    (repo / "dos.txt").write_bytes(b"line one\r\nline two\r\n")

    assert commit_checkpoint(repo, "checkpoint") is not None

    committed = subprocess.run(["git", "cat-file", "blob", "HEAD:dos.txt"], cwd=repo, capture_output=True).stdout
    assert committed == b"line one\r\nline two\r\n"


def test_a_filter_from_the_users_global_config_still_applies(tmp_path: Path) -> None:
    # Like git-lfs set up with `git lfs install`: the user's own config, not the repository's.
    repo = make_repo(tmp_path / "project")
    git(repo, "config", "--global", "filter.upper.clean", "tr a-z A-Z")
    git(repo, "config", "--global", "filter.upper.required", "true")
    # The repository's config tries to replace it: the user's command wins.
    command, ran = spy(tmp_path, "replaced")
    git(repo, "config", "filter.upper.clean", command)
    (repo / ".gitattributes").write_text("*.up filter=upper\n")
    (repo / "a.up").write_text("shout\n")

    assert commit_checkpoint(repo, "checkpoint") is not None

    assert git(repo, "cat-file", "blob", "HEAD:a.up") == "SHOUT"
    assert not ran.exists()


def test_a_setting_that_cannot_be_overridden_stops_the_checkpoint_with_what_to_do(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "project")
    git(repo, "config", "filter.a=b.clean", "cat")
    (repo / "a.txt").write_text("a\n")
    with pytest.raises(CheckpointError, match=r"filter\.a=b\.clean.*git config --unset"):
        commit_checkpoint(repo, "checkpoint")


PLANT_FILTER = (
    "with open('.git/config', 'a') as config:\n"
    "    config.write('[filter \"evil\"]\\n\\tclean = sed s/verified/tampered/\\n\\trequired = true\\n')\n"
    "with open('.gitattributes', 'w') as attributes:\n"
    "    attributes.write('*.txt filter=evil\\n')\n"
)


def test_the_checkpoint_commits_the_file_the_check_verified_despite_a_planted_filter(fake_api, tmp_path: Path) -> None:
    from fake_messages_api.scripted_agent.plans import bash, edit_create, report
    from tests.cli_helpers import run_cli, write_spec

    project = make_repo(tmp_path / "project")
    fake_api.plans["feat-01"] = [
        [edit_create("result.txt", "verified\n"), edit_create("plant.py", PLANT_FILTER)],
        [bash("python3 plant.py")],  # around the shell policy, which refuses `git config filter...`
        [report("Implemented feat-01")],
    ]
    spec = write_spec(project, 1, verify="grep -qx verified result.txt")

    # Without the sandbox, which would keep .git read-only: the checkpoint's own defence is under test.
    result = run_cli(["run", str(spec), "--sandbox", "none"], project, fake_api)

    assert result.code == 0, result.stderr
    assert git(project, "config", "filter.evil.clean") == "sed s/verified/tampered/"  # the agent did plant it
    committed = subprocess.run(["git", "cat-file", "blob", "HEAD:result.txt"], cwd=project, capture_output=True).stdout
    assert committed == (project / "result.txt").read_bytes() == b"verified\n"


def test_a_run_resumed_after_a_crash_removes_a_stale_index_lock_and_says_so(fake_api, tmp_path: Path) -> None:
    from tests.cli_helpers import run_cli, write_spec

    project = make_repo(tmp_path / "project")
    (project / ".git" / "index.lock").write_bytes(b"")  # a git killed with the previous run
    spec = write_spec(project, 2)

    result = run_cli(["run", str(spec)], project, fake_api)

    assert result.code == 0, result.stderr
    assert "index.lock" in result.stderr and "checkpoint commit" not in result.stderr
    events = (project / ".autonomous" / "events.jsonl").read_text()
    assert "index.lock" in events
    subjects = git(project, "log", "--format=%s").splitlines()
    assert [s.split(":")[1].strip() for s in subjects] == ["feat-02", "feat-01"]
