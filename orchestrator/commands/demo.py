"""`orchestrate demo`: the whole product in half a minute, offline, with no key.

It writes the textkit spec into a new directory and runs the real `run` path on it, against
the demo model (`orchestrator.demo`): a scripted agent served by a fake Messages API on
127.0.0.1, reached with a dummy key that never leaves the machine. A new demo presses Ctrl-C
itself once, during its fourth feature, and resumes: a resume is one of the things users come
to see. `orchestrate demo --dir DIR` on a demo that stopped resumes it.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, TextIO

from orchestrator.commands.arguments import open_project, read_spec
from orchestrator.commands.demo_directory import DemoDirectory, closing_screen, demo_directory
from orchestrator.commands.run import RunRequest, run_command
from orchestrator.config_layers import load_config
from orchestrator.git.run_git import CheckpointError, check_git
from orchestrator.run.checks.running.check_tools import missing_check_tools
from orchestrator.store.disk.lock import LockHeld, RunLock
from orchestrator.user_errors import EXIT_INTERRUPTED, UsageError

if TYPE_CHECKING:
    from pathlib import Path

    from orchestrator.demo.scripted import DemoModel

_API_ENV = ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
# The feature during whose first call a new demo presses Ctrl-C: late enough that three
# checkpoints are there to keep, early enough that most of the story follows the resume.
INTERRUPT_AT = "case-conversion"


def demo_command(directory: Path | None, json_mode: bool = False, verbosity: int = 0, agent: str | None = None) -> int:
    """Build textkit in `directory` (default: a new temporary directory) with the demo model and `agent`."""
    from orchestrator.demo.scripted import DEMO_MODEL, DEMO_PRICES, DEMO_SUMMARIZER_MODEL, press_ctrl_c_during
    from orchestrator.demo.spec_bundle import write_spec

    demo = demo_directory(directory)
    out = sys.stderr if json_mode else sys.stdout
    spec_path = demo.spec_dir / "spec.json" if demo.resumed else write_spec(demo.spec_dir)
    loaded = read_spec(spec_path)
    _refuse_missing_check_tools([loaded.spec.check_command(f) for f in loaded.spec.features])
    paths = open_project(demo.project, may_be_missing=True)
    if demo.resumed:
        _refuse_a_running_demo(paths.lock_file)
        out.write(f"orchestrate demo: resuming the demo in {demo.root}: what passed stays passed\n\n")
    else:
        out.write(f"orchestrate demo: building textkit in {demo.project} with {DEMO_MODEL}, a scripted demo model "
                  "served on 127.0.0.1 (no key, no network; costs priced as if it were Claude)\n\n")
        _git_init(demo.project)
    out.flush()
    # Priced as the models it stands for: an id the price table does not know costs the dearest price.
    flags = {"model": DEMO_MODEL, "summarizer_model": DEMO_SUMMARIZER_MODEL, "commit": True, "html": str(demo.html),
             "agent": agent, "pricing": DEMO_PRICES}
    config = load_config(flags, paths.root)
    request = RunRequest(json_mode=json_mode, verbosity=verbosity)
    with _demo_model_env() as fake:
        pressed = None if demo.resumed else press_ctrl_c_during(fake, INTERRUPT_AT)
        own = None if pressed is None else pressed.is_set  # its own Ctrl-C: no warning to act on
        code = run_command(loaded, config=config, paths=paths, request=replace(request, own_interrupt=own))
        if code == EXIT_INTERRUPTED and pressed is not None and pressed.is_set():
            _say_resuming(out, demo)
            code = run_command(loaded, config=config, paths=paths, request=request)
    out.write(closing_screen(demo, code))
    return code


def _refuse_a_running_demo(lock_file: Path) -> None:
    """A demo still running in that directory: its lock's error, before any word of resuming."""
    lock = RunLock(lock_file)
    try:
        lock.acquire()
    except LockHeld as err:
        raise UsageError(str(err)) from err
    lock.release()


def _refuse_missing_check_tools(commands: list[str | None]) -> None:
    """Before any model call: a check that cannot run here fails every attempt; say what it lacks."""
    from orchestrator.safety.credentials.secrets import scrubbed_environment

    problems = missing_check_tools(commands, scrubbed_environment())
    if problems:
        raise UsageError("; ".join(problems))


def _say_resuming(out: TextIO, demo: DemoDirectory) -> None:
    again = f"orchestrate demo --dir {shlex.quote(str(demo.root))}"
    out.write(f"\norchestrate demo: that Ctrl-C was the demo's own, during {INTERRUPT_AT}. The state was saved; "
              f"after a real one, `{again}` resumes. Resuming now: the passed features stay passed, "
              f"{INTERRUPT_AT} starts again on the files its interrupted attempt left.\n\n")
    out.flush()


def _git_init(project: Path) -> None:
    """A git repository, so that every passed feature gets its checkpoint commit."""
    project.mkdir(parents=True, exist_ok=True)
    try:
        check_git(project, "init", "--quiet")
    except CheckpointError:
        sys.stderr.write("orchestrate demo: git is not available; the run goes on without checkpoints\n")


@contextmanager
def _demo_model_env() -> Iterator[DemoModel]:
    """Serve the demo model and point the SDK at it; the caller's environment comes back after."""
    from orchestrator.demo.scripted import DEMO_API_KEY, demo_model

    saved = {name: os.environ.get(name) for name in _API_ENV}
    with demo_model() as fake:
        os.environ.pop("ANTHROPIC_AUTH_TOKEN", None)
        os.environ.update(fake.env(DEMO_API_KEY))
        try:
            yield fake
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
