"""Ctrl-C or SIGTERM at any moment of start-up ends the program cleanly: exit 130, no traceback.

Start-up is mostly imports (typer, rich, pydantic, and for a run the SDK: up to seconds on a
busy machine). Each trial starts the real command line and sends one signal at a random
moment of its life. Before the program's first line runs (the interpreter starting, `site`
importing), no program can catch a signal, so the test looks at the process just before
sending: the program has started if it has a SIGTERM handler of its own (`SigCgt` in
/proc/PID/status) or has already loaded pydantic's compiled core (in /proc/PID/maps), which
only the program's own imports bring in. Every signal sent after that must end it with exit
130, one line and no traceback.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli_helpers import cli_env, orchestrate_command, write_spec

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs /proc to look inside a process"),
]

TRIALS_PER_SIGNAL = 14
HEAVY_MODULE = "_pydantic_core"  # a compiled module the program's imports load, the interpreter's never do


def catches(pid: int, signum: int) -> bool:
    """Whether process `pid` has a handler of its own for `signum` right now."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    mask = next((line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:")), "0")
    return bool(int(mask, 16) >> (signum - 1) & 1)


def has_loaded_heavy_imports(pid: int) -> bool:
    try:
        return HEAVY_MODULE in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


def commands(project: Path, spec: Path) -> list[list[str]]:
    return [
        orchestrate_command("validate", str(spec)),
        orchestrate_command("run", str(spec), "--dry-run", "--project-dir", str(project)),
    ]


def lifetime(command: list[str], cwd: Path) -> float:
    """How long the command takes, undisturbed: the span over which signals are sent."""
    started = time.monotonic()
    done = subprocess.run(command, cwd=cwd, env=cli_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return time.monotonic() - started


def test_a_signal_at_any_moment_of_start_up_exits_130_without_a_traceback(tmp_path: Path):
    spec = write_spec(tmp_path, 3)
    rng = random.Random()
    counts = {"program running": 0, "before the program ran": 0, "finished first": 0}
    bad: list[str] = []
    spans = [lifetime(command, tmp_path) for command in commands(tmp_path, spec)]
    for trial in range(2 * TRIALS_PER_SIGNAL):
        signum = (signal.SIGINT, signal.SIGTERM)[trial % 2]
        which = trial // 2 % 2
        command = commands(tmp_path, spec)[which]
        proc = subprocess.Popen(command, cwd=tmp_path, env=cli_env(), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            time.sleep(rng.uniform(0, spans[which]))
            # Looked at before sending: if either holds now, it held when the signal arrived.
            started = catches(proc.pid, signal.SIGTERM) or has_loaded_heavy_imports(proc.pid)
            proc.send_signal(signum)
            _out, err = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        if proc.returncode == 0 and "interrupted" not in err:
            counts["finished first"] += 1
        elif started:
            counts["program running"] += 1
            if proc.returncode != 130 or "Traceback" in err or "KeyboardInterrupt" in err:
                bad.append(f"{signal.Signals(signum).name} to `{' '.join(command[3:5])}`: exit {proc.returncode}\n"
                           f"{err[-1500:]}")
        else:
            counts["before the program ran"] += 1
    print(f"\nstart-up signals: {counts} over {2 * TRIALS_PER_SIGNAL} trials; "
          f"spans {', '.join(f'{s:.2f}s' for s in spans)}")
    assert not bad, f"{len(bad)} bad exit(s):\n\n" + "\n\n".join(bad)
    assert counts["program running"] >= TRIALS_PER_SIGNAL // 2, f"too few signals reached the program: {counts}"


def test_signal_handling_is_in_place_before_the_heavy_imports(tmp_path: Path):
    """Seen from outside: a moment when the handler is there and pydantic is not yet loaded."""
    spec = write_spec(tmp_path, 1)
    for _run in range(3):  # the moment can be missed when this process is not scheduled in time
        proc = subprocess.Popen(orchestrate_command("validate", str(spec)), cwd=tmp_path, env=cli_env(),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        seen_early = False
        try:
            while proc.poll() is None and not seen_early:
                # In this order: the handler seen first, then no heavy module seen after it.
                seen_early = catches(proc.pid, signal.SIGTERM) and not has_loaded_heavy_imports(proc.pid)
                if has_loaded_heavy_imports(proc.pid):
                    break
                time.sleep(0.0005)
        finally:
            proc.wait(timeout=120)
        if seen_early:
            return
    pytest.fail(f"no SIGTERM handler before {HEAVY_MODULE} was loaded, in 3 runs")


def _main_with_app(tmp_path: Path, app_source: str) -> subprocess.CompletedProcess[str]:
    """`orchestrator.cli.commands.main()` in a new process, with the command line replaced by `app` as
    defined in `app_source` (a way to raise what an interrupted import raises, exactly when wanted)."""
    script = f"import orchestrator.cli.commands as cli\n{app_source}\ncli.app = app\ncli.main()\n"
    return subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=cli_env(), capture_output=True, text=True,
                          timeout=60)


def _assert_interrupted(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 130, result.stderr
    assert "interrupted" in result.stderr and "Traceback" not in result.stderr


def test_an_interrupt_that_pydantic_core_turns_into_a_schema_error_still_exits_130(tmp_path: Path):
    """Ctrl-C while pydantic-core builds a serializer comes back as a SchemaError that keeps only
    the interrupt's text (no cause): the signal's arrival is what says it was an interrupt."""
    _assert_interrupted(_main_with_app(tmp_path, (
        "import os, signal, time\n"
        "class SchemaError(Exception):\n"
        "    pass\n"
        "def app(*_args, **_kwargs):\n"
        "    try:\n"
        "        os.kill(os.getpid(), signal.SIGINT)\n"
        "        time.sleep(5)\n"
        "    except KeyboardInterrupt:\n"
        "        pass\n"
        "    raise SchemaError('Error building `literal` serializer:\\n  KeyboardInterrupt: ')\n"
    )))


def test_an_error_with_no_interrupt_behind_it_is_not_taken_for_one(tmp_path: Path):
    result = _main_with_app(tmp_path, "def app(*_args, **_kwargs):\n    raise ValueError('a real bug')\n")
    assert result.returncode == 1 and "ValueError: a real bug" in result.stderr


def test_an_interrupt_wrapped_by_class_creation_still_exits_130(tmp_path: Path):
    """Ctrl-C inside a pydantic model's `__set_name__` (while importing) reaches `main` as a
    RuntimeError caused by the KeyboardInterrupt: still an interrupt, not a traceback."""
    _assert_interrupted(_main_with_app(tmp_path, (
        "def app(*_args, **_kwargs):\n"
        "    try:\n"
        "        raise KeyboardInterrupt\n"
        "    except KeyboardInterrupt as err:\n"
        "        raise RuntimeError(\"Error calling __set_name__ on 'PydanticDescriptorProxy'\") from err\n"
    )))
