"""The tests' own helpers: no test leans on process tricks, and the in-process CLI puts back the
program's globals after each call (`tests/cli_in_process.py`)."""

from __future__ import annotations

import types
from pathlib import Path

from tests.cli_in_process import ProgramGlobals

TESTS = Path(__file__).resolve().parent.parent


class _Directories:
    """A module-level object of the program's that keeps state (as `claude_code.session.launch`'s)."""

    def __init__(self) -> None:
        self.parent: str | None = None
        self.busy: set[str] = set()


_Directories.__module__ = "orchestrator.example"  # one of the program's classes, as the harness sees it


def test_no_test_file_writes_a_process_s_memory() -> None:
    trick = "/proc/self/" + "mem"  # spelled in two pieces, so that this file does not name it
    naming = [path.relative_to(TESTS).as_posix() for path in TESTS.rglob("*.py") if trick in path.read_text()]
    assert naming == []


def test_a_calls_changes_to_module_globals_are_put_back() -> None:
    module = types.ModuleType("orchestrator_example")
    module.running = {"proxy": "/tmp/a.sock"}
    module.active = {"marker"}
    module.concurrent = False
    module.history = [1]
    module.directories = _Directories()
    before = ProgramGlobals([module])

    module.running["forward"] = "/tmp/b.sock"
    module.active.clear()
    module.concurrent = True
    module.history = [1, 2]
    module.cached = "set during the call"
    module.directories.parent = "/tmp/gone-at-the-call-s-end"
    module.directories.busy.add("attempt-0")
    before.restore()

    assert (module.running, module.active, module.concurrent, module.history) == (
        {"proxy": "/tmp/a.sock"}, {"marker"}, False, [1])
    assert not hasattr(module, "cached")
    assert (module.directories.parent, module.directories.busy) == (None, set())
