"""What pytest really reported, so a check that ends before it reports cannot pass.

Every check runs with a tiny pytest plugin (`PROBE_SOURCE`) that pytest loads through
`PYTEST_ADDOPTS`: it appends to a record file, one JSON line at a time, that a session started,
each test's outcome, and, first thing when the session finishes, its exit status. A check whose
pytest ends early (`os._exit(0)` in the code under test, in a package's `__init__.py` or in
`tests/__init__.py`) leaves a start without an end; a plain pytest command that leaves no session
at all ran something else (a project `pytest.py` shadowing pytest). Either is a failure, whatever
the exit status said. Bytecode caches are off for every check too (`PYTHONDONTWRITEBYTECODE`,
`-p no:cacheprovider`), so a check never writes them; a forged cache already in the tree is the
clean checkout's business (`orchestrator.run.checks.clean_checkout`).

The test outcomes also let several checks share one pytest process (`orchestrator.run.checks.running.check_batch`).
Code under test runs inside pytest's process and could write the record itself: this catches a
process that ends early, not code written to forge this file (docs/security.md's "not caught" list).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.run.checks.running.pytest_command import pytest_invocation

PROBE_MODULE = "orchestrate_pytest_probe"
RECORD_VARIABLE = "ORCHESTRATE_PYTEST_RECORD"
ONLY_VARIABLE = "ORCHESTRATE_PYTEST_ONLY"
# A record larger than this was not written by the probe alone: it is read no further.
MAX_RECORD_BYTES = 64 * 1024 * 1024
NO_TESTS_STATUS = 5  # pytest's "no tests collected", which a project's hook may turn into 0

PROBE_SOURCE = '''"""Written by orchestrate for one check: records what pytest reports (see orchestrate's pytest_outcomes)."""
import json
import os

import pytest

_PATH = os.environ.get("ORCHESTRATE_PYTEST_RECORD", "")
_ACTIVE = [False]
_ROOTS = []  # the running sessions' root directories, innermost last (pytester runs sessions inside one)


def _write(entry):
    if _ACTIVE[0] and _PATH:
        with open(_PATH, "a", encoding="utf-8") as record:
            record.write(json.dumps(entry) + "\\n")


# A batch of checks (orchestrate's check_batch) names directories and lists here the files it wants: the
# rest is not collected (by xdist workers either). A pytest a test starts sees the list too and may then
# collect nothing: that test fails, and its check runs again alone, where the list is not set.
_ONLY = [os.path.realpath(p) for p in json.loads(os.environ.get("ORCHESTRATE_PYTEST_ONLY", "") or "[]")]


if _ONLY and int(pytest.__version__.split(".")[0]) >= 7:
    def pytest_ignore_collect(collection_path, config):
        path = os.path.realpath(str(collection_path))
        for wanted in _ONLY:
            if path == wanted or path.startswith(wanted + os.sep) or wanted.startswith(path + os.sep):
                return None
        return True


def pytest_configure(config):
    # An xdist worker reports through its controller, which records for it.
    _ACTIVE[0] = not hasattr(config, "workerinput")


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session):
    _ROOTS.append(str(getattr(session.config, "rootpath", None) or session.config.rootdir))
    _write({"start": os.getpid()})


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    _write({"end": os.getpid(), "status": int(exitstatus)})
    if _ROOTS:
        _ROOTS.pop()


def _test(node_id, outcome):
    _write({"test": node_id, "outcome": outcome, "root": _ROOTS[-1] if _ROOTS else ""})


def pytest_collectreport(report):
    if report.failed:
        _test(report.nodeid, "error")


def pytest_runtest_logreport(report):
    if report.when == "call":
        _test(report.nodeid, report.outcome)
    elif report.outcome != "passed":
        _test(report.nodeid, "error" if report.failed else report.outcome)
'''


@dataclass
class PytestRecord:
    """What the probe wrote during one check."""

    started: list[int] = field(default_factory=list)
    """The pid of each session that started, in order."""
    ended: dict[int, int] = field(default_factory=dict)
    """Session pid -> the exit status it reported."""
    tests: list[tuple[str, str, str]] = field(default_factory=list)
    """(root directory, node id, outcome: passed, failed, skipped or error), in the order reported."""

    def first_status(self) -> int | None:
        """The exit status the first session reported (the check's own pytest); None if it reported none."""
        return self.ended.get(self.started[0]) if self.started else None


@dataclass(frozen=True)
class ProbeSetup:
    """Where one check's probe lives and writes: a fresh directory, gone after the check."""

    directory: Path

    @property
    def record(self) -> Path:
        return self.directory / "record.jsonl"

    def environment(self, env: Mapping[str, str] | None) -> dict[str, str]:
        """`env` (None: ours) with the probe on pytest's path and bytecode caches off."""
        result = dict(os.environ if env is None else env)
        # Last on the path: the probe never shadows a module of the project.
        result["PYTHONPATH"] = os.pathsep.join(filter(None, [result.get("PYTHONPATH"), str(self.directory)]))
        result["PYTEST_ADDOPTS"] = " ".join(
            filter(None, [f"-p {PROBE_MODULE} -p no:cacheprovider", result.get("PYTEST_ADDOPTS")])
        )
        result["PYTHONDONTWRITEBYTECODE"] = "1"
        result[RECORD_VARIABLE] = str(self.record)
        return result

    def read(self) -> PytestRecord:
        return read_record(self.record)


@contextmanager
def probe_setup() -> Iterator[ProbeSetup]:
    """A fresh probe directory (the plugin written into it) for one check; removed afterwards."""
    directory = Path(tempfile.mkdtemp(prefix="orchestrate-check-"))
    try:
        (directory / f"{PROBE_MODULE}.py").write_text(PROBE_SOURCE, encoding="utf-8")
        yield ProbeSetup(directory)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def read_record(path: Path) -> PytestRecord:
    """The record at `path`; empty when there is none (no pytest ran), never following a link."""
    record = PytestRecord()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return record
    with os.fdopen(fd, "rb") as stream:
        data = stream.read(MAX_RECORD_BYTES)
    for line in data.decode("utf-8", errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict):
            continue
        _take(record, entry)
    return record


def _take(record: PytestRecord, entry: dict[str, object]) -> None:
    start, end, test, status = entry.get("start"), entry.get("end"), entry.get("test"), entry.get("status")
    if isinstance(start, int):
        record.started.append(start)
    elif isinstance(end, int) and isinstance(status, int):
        record.ended[end] = status
    elif isinstance(test, str):
        record.tests.append((str(entry.get("root", "")), test, str(entry.get("outcome", ""))))


def early_end(command: str | None, exit_code: int | None, record: PytestRecord) -> str | None:
    """Why a check that exited `exit_code` did not really pass, judging by `record`; None when it did
    (or when it failed anyway: its own exit status says so)."""
    if exit_code != 0:
        return None
    unfinished = [pid for pid in record.started if pid not in record.ended]
    if unfinished:
        return (f"pytest (pid {unfinished[0]}) ended before reporting its results: something the tests ran or "
                "imported ended the process early (os._exit, an exit at import), so nothing was verified")
    if pytest_invocation(command) is None:
        return None
    if not record.started:
        return ("the check is a pytest command, but no pytest session ran: is a file of the project shadowing pytest "
                "(a `pytest.py` or a `pytest/` directory)?")
    # The check's own session is the first; later ones are pytests its tests started, which may fail on purpose.
    status = record.first_status()
    if status not in (0, NO_TESTS_STATUS):
        return f"pytest reported exit status {status}, but the check exited 0"
    return None
