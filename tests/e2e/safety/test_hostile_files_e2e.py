"""Hostile files end to end, through the CLI as a user runs it, against the fake API.

Files in `.autonomous/` that are huge, deeply nested, not UTF-8, garbage, or that lie (unsafe
feature ids, a log naming another feature); crafted specs; and symbolic links planted to lead
the orchestrator's writes out of the project. Whatever the file, the user gets one line on
stderr naming it and saying what was done, the exit code the README documents, and never a
traceback. A damaged file is set aside into `.autonomous/backups/` (never deleted), passed
features are kept, nothing is written outside `.autonomous/`, and the run goes on where it can.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from context_agent.memory.stores import MAX_STORE_BYTES
from orchestrator.commands.rendering.live_view import LiveRenderer
from orchestrator.run.attempt.strategies import replay_messages
from orchestrator.spec.fields import MAX_SPEC_BYTES
from orchestrator.store.event_kinds import Notice
from orchestrator.store.feature_log import MAX_LOG_BYTES
from orchestrator.store.state import MAX_STATE_BYTES
from orchestrator.store.working_memory import MAX_LINE_BYTES
from tests.cli_helpers import CliResult, file_tree, plain_summarizer, read_json, run_cli, write_spec
from tests.fake_api_fixtures import running_fake_api

AUTONOMOUS = ".autonomous"
STATE = ".autonomous/state/execution-state.json"
JOURNAL = ".autonomous/state/journal.jsonl"
LOCK = ".autonomous/state/run.lock"
LOGS = ".autonomous/logs"
CONTEXT = ".autonomous/context"
MEMORY = ".autonomous/memory/working-memory.jsonl"
NESTED = b"[" * 100_000


# ---- helpers -------------------------------------------------------------------------------


def _sparse(path: Path, size: int) -> None:
    """A file of `size` zero bytes that takes no disk space."""
    with open(path, "wb") as handle:
        handle.truncate(size)


def _line_about(stderr: str, *phrases: str) -> str:
    """The one line of stderr that says all of `phrases`: the message is one line, and said once."""
    lines = [line for line in stderr.splitlines() if all(phrase in line for phrase in phrases)]
    assert len(lines) == 1, f"expected one line saying {phrases}, got:\n{stderr}"
    return lines[0]


def _backup_of(project: Path, name: str) -> Path:
    """The one backup of the file `name` in `.autonomous/backups/`."""
    backups = sorted((project / AUTONOMOUS / "backups").glob(f"{name}.corrupt-*"))
    assert len(backups) == 1, backups
    return backups[0]


def _passed(result: CliResult) -> set[str]:
    """The passed features, from `status --json`."""
    assert result.code == 0, result.stderr
    return {fid for fid, entry in json.loads(result.stdout)["features"].items() if entry["status"] == "passed"}


def _no_traceback(*results: CliResult) -> None:
    for result in results:
        assert "Traceback" not in result.stdout + result.stderr, result.stderr


def _project_files(project: Path) -> dict[str, str]:
    """The project's own files: everything but `.autonomous/`."""
    return file_tree(project, skip=project / AUTONOMOUS)


def _state_naming(project: Path, *feature_ids: str) -> bytes:
    """The project's state, well-formed, plus passed features under these (unsafe) ids."""
    state = read_json(project / STATE)
    state["features"].update({fid: {"status": "passed"} for fid in feature_ids})
    return json.dumps(state).encode()


def _journal_line(project: Path, feature_id: str) -> bytes:
    """A journal entry shaped like the ones a run appends, marking `feature_id` passed."""
    state = read_json(project / STATE)
    entry = {"feature": feature_id, "state": {"status": "passed"}, "iteration": 9,
             "summarization": state["summarization"], "totals": state["totals"]}
    return json.dumps(entry).encode() + b"\n"


@pytest.fixture(scope="module")
def two_passed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project of three features whose first two passed in a real run; built once, then copied."""
    root = tmp_path_factory.mktemp("two-passed")
    project = root / "project"
    project.mkdir()
    (root / "home").mkdir()
    spec = write_spec(project, 3)
    with running_fake_api() as fake:
        result = run_cli(["run", str(spec), "--only", "feat-01,feat-02"], project, fake, HOME=str(root / "home"))
    assert result.code == 0, result.stderr
    return project


@pytest.fixture
def project(two_passed: Path, tmp_path: Path) -> Path:
    """A fresh copy of the two-passed project, with a directory `outside` beside it."""
    copy = tmp_path / "project"
    shutil.copytree(two_passed, copy, symlinks=True)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "keep.txt").write_text("outside data\n")
    return copy.resolve()


# ---- the state: snapshot and journal --------------------------------------------------------


def _huge_state(project: Path) -> str:
    _sparse(project / STATE, MAX_STATE_BYTES + 1)
    return f"larger than {MAX_STATE_BYTES} bytes"


def _nested_state(project: Path) -> str:
    (project / STATE).write_bytes(NESTED)
    return "its JSON is nested too deeply"


def _latin1_state(project: Path) -> str:
    (project / STATE).write_bytes(b'{"features": "caf\xe9"}')
    return "not UTF-8 at byte 17"


def _state_with_unsafe_ids(project: Path) -> str:
    (project / STATE).write_bytes(_state_naming(project, "../../etc", "feat\x00-01"))
    return "feature id '../../etc' is not a safe id"


@pytest.mark.parametrize("damage", [_huge_state, _nested_state, _latin1_state, _state_with_unsafe_ids])
def test_a_damaged_state_file_is_set_aside_and_rebuilt_from_the_logs(project, tmp_path, damage):
    reason = damage(project)
    damaged_size = (project / STATE).stat().st_size
    files, outside = _project_files(project), file_tree(tmp_path, skip=project)

    result = run_cli(["status", "--json"], project)

    _no_traceback(result)
    assert _passed(result) == {"feat-01", "feat-02"}
    warning = _line_about(result.stderr, f"state file {project / STATE} could not be read ({reason})",
                          "rebuilt from feature logs (2 passed features kept)")
    backup = _backup_of(project, "execution-state.json")
    assert f"set aside as {backup}" in warning and backup.stat().st_size == damaged_size
    assert _project_files(project) == files and file_tree(tmp_path, skip=project) == outside


def _garbage_journal(project: Path) -> str:
    # Not JSON, not UTF-8, nested too deeply, and two well-formed lines naming unsafe ids.
    lines = [b"garbage\n", b"\xff\xfe\n", NESTED + b"\n",
             _journal_line(project, "../../etc"), _journal_line(project, "feat\x00-01")]
    (project / JOURNAL).write_bytes(b"".join(lines))
    return "5 unreadable line(s) skipped"


def _huge_journal(project: Path) -> str:
    _sparse(project / JOURNAL, MAX_STATE_BYTES + 1)
    return f"is larger than {MAX_STATE_BYTES} bytes"


def _garbage_journal_and_no_snapshot(project: Path) -> str:
    # Without a snapshot, the journal was all the state there was: the logs must still count.
    (project / STATE).unlink()
    (project / JOURNAL).write_bytes(NESTED + b"\n")
    return "1 unreadable line(s) skipped"


@pytest.mark.parametrize("damage", [_garbage_journal, _huge_journal, _garbage_journal_and_no_snapshot])
def test_a_damaged_state_journal_is_set_aside_and_no_passed_feature_is_lost(project, damage):
    reason = damage(project)
    files = _project_files(project)

    result = run_cli(["status", "--json"], project)

    _no_traceback(result)
    assert _passed(result) == {"feat-01", "feat-02"}
    warning = _line_about(result.stderr, f"state journal {project / JOURNAL}", reason)
    assert f"set aside as {_backup_of(project, 'journal.jsonl')}" in warning
    assert _project_files(project) == files


# ---- a run over a hostile .autonomous/ -------------------------------------------------------


def test_a_run_over_a_hostile_state_directory_warns_sets_aside_never_writes_out_and_goes_on(
    fake_api, project, tmp_path
):
    outside = tmp_path / "outside"
    # The state names an unsafe id, a stale lock is nested too deeply, and the four context
    # stores are nested, not UTF-8, or huge.
    (project / STATE).write_bytes(_state_naming(project, "../../etc"))
    (project / LOCK).write_bytes(NESTED)
    context = project / CONTEXT
    (context / "key-decisions.json").write_bytes(NESTED)
    (context / "running-summary.json").write_bytes(b'{"summary": ' * 100_000)
    (context / "failure-memory.json").write_bytes(b'{"failures": [], "note": "caf\xe9"}')
    _sparse(context / "active-constraints.json", MAX_STORE_BYTES + 1)
    stores = {
        "key-decisions.json": "is not valid JSON", "running-summary.json": "is not valid JSON",
        "failure-memory.json": "is not UTF-8", "active-constraints.json": f"is larger than {MAX_STORE_BYTES} bytes",
    }
    with open(project / MEMORY, "ab") as memory:
        # Four lines replay cannot parse (not JSON, not UTF-8, nested, longer than a line may be)
        # and one that is JSON but not an entry.
        memory.write(b"garbage\n\xff\xfe\n" + NESTED + b"\n{" + b" " * MAX_LINE_BYTES + b"}\n")
        memory.write(b'{"type": 1, "ts_ms": 2}\n')
    # The event log and feat-03's log are links to files outside, whose content must stay.
    linked = [".autonomous/events.jsonl", LOGS + "/feat-03.json"]
    for rel in linked:
        (outside / Path(rel).name).write_text('{"type": "outside", "ts_ms": 1}\n')
        (project / rel).unlink(missing_ok=True)
        (project / rel).symlink_to(outside / Path(rel).name)
    # And late in the run, as the agent's commands or a check could, the context directory is
    # swapped for a link to outside: here when the summarizer is called, after the stores were read.
    def swap_then_summarize(request):
        if not context.is_symlink():
            context.rename(project / f"{CONTEXT}.real")
            context.symlink_to(outside, target_is_directory=True)
        return plain_summarizer(request)

    fake_api.summarizer = swap_then_summarize
    files, beside = _project_files(project), file_tree(tmp_path, skip=project)

    # compressed: the stores are read for feat-03's context, before the summarizer is called
    # (under replay or window no summarizer model is called).
    result = run_cli(["run", "spec.json"], project, fake_api)
    again = run_cli(["run", "spec.json"], project, fake_api)

    _no_traceback(result, again)
    assert result.code == 0, result.stderr
    assert "3 passed" in result.stdout
    # The passed features are kept, not built again; the run built the third.
    assert not fake_api.agent_requests("feat-01") and not fake_api.agent_requests("feat-02")
    assert fake_api.agent_requests("feat-03")
    # Each damaged file: one line naming it (and its backup).
    _line_about(result.stderr, f"state file {project / STATE}", "'../../etc' is not a safe id",
                "2 passed features kept")
    for name, problem in stores.items():
        warning = _line_about(result.stderr, f"{name} {problem}")
        assert f"moved to {_backup_of(project, name)}" in warning
    _line_about(result.stderr, f"working-memory log {project / MEMORY}: 5 unreadable line(s)")
    _line_about(result.stderr, f"taking over an unreadable lock file {project / LOCK}")
    _, replay = replay_messages(project / MEMORY)  # what --context replay would send
    assert (replay["skipped_invalid_json"], replay["skipped_invalid_shape"]) == (4, 1)
    assert replay["total_lines"] == replay["parsed_entries"] + 5 and replay["parsed_entries"] > 0
    # The linked files were replaced by the run's own; the linked directory was refused, and
    # the run went on without it. The next run stops before writing anything, and says why.
    for rel in linked:
        assert (project / rel).is_file() and not (project / rel).is_symlink(), rel
    refused = f"{project / CONTEXT} is a symbolic link (to {outside}); orchestrate keeps its state inside the project"
    assert refused in result.stderr
    assert again.code == 2 and not again.stdout, again.stderr
    _line_about(again.stderr, f"orchestrate: error: {refused}")
    # Only the agent's work changed the project; nothing changed beside it.
    built = _project_files(project)
    assert built.pop("features/feat-03.txt") and built == files
    assert file_tree(tmp_path, skip=project) == beside


# ---- feature logs ----------------------------------------------------------------------------


def test_hostile_feature_logs_crash_neither_status_nor_logs_and_prove_nothing(project, tmp_path):
    logs = project / LOGS
    # feat-03 has not run; this log claims it passed, under feat-01's name.
    (logs / "feat-03.json").write_text((logs / "feat-01.json").read_text())
    _sparse(logs / "huge.json", MAX_LOG_BYTES + 1)
    (logs / "nested.json").write_bytes(NESTED)
    (logs / "latin.json").write_bytes(b'{"id": "latin", "status": "caf\xe9"}')
    (logs / "dir.json").mkdir()
    (logs / "link.json").symlink_to(tmp_path / "outside" / "keep.txt")
    # Terminal escapes and rich markup, which must be shown as text, not obeyed.
    (logs / "ansi.json").write_text(json.dumps({"id": "ansi", "status": "[/x]\x1b[2J[bold]", "attempts": 1}))
    # A log whose fields are not of their types is not ours: it proves nothing, and says why.
    (logs / "typed.json").write_text(json.dumps({"id": "typed", "status": "passed", "attempts": "[bold]"}))
    (project / STATE).write_bytes(b"{")  # so that status rebuilds the state from these logs
    files, outside = _project_files(project), file_tree(tmp_path, skip=project)

    status = run_cli(["status", "--json"], project)
    listing = run_cli(["logs"], project)
    huge, link = run_cli(["logs", "huge"], project), run_cli(["logs", "link"], project)

    _no_traceback(status, listing, huge, link)
    assert _passed(status) == {"feat-01", "feat-02"}
    assert listing.code == 0, listing.stderr
    rows = {line.split("│")[1].strip(): line for line in listing.stdout.splitlines() if line.count("│") > 2}
    expected = {
        "feat-03": "it names feature 'feat-01', not 'feat-03'", "huge": f"it is larger than {MAX_LOG_BYTES} bytes",
        "nested": "its JSON is nested too deeply", "latin": "it is not UTF-8", "dir": "it is not a regular file",
        "link": "it is a symbolic link", "typed": "it is not a feature log (attempts: Input should be a valid integer",
    }
    for name, reason in expected.items():
        assert f"(unusable log: {reason}" in rows[name], listing.stdout
    assert "passed" in rows["feat-01"] and "[/x]\\x1b[2J" in rows["ansi"] and "[bold]" in rows["ansi"]
    assert "\x1b" not in listing.stdout
    for result, name, reason in ((huge, "huge", expected["huge"]), (link, "link", expected["link"])):
        assert result.code == 2 and not result.stdout
        _line_about(result.stderr, f"orchestrate: error: the log of feature '{name}'", f"{name}.json", reason)
    assert "outside data" not in listing.stdout + link.stdout
    assert _project_files(project) == files and file_tree(tmp_path, skip=project) == outside


def test_status_prints_markup_and_escapes_from_the_state_as_text(project):
    state = read_json(project / STATE)
    state["features"]["feat-02"] |= {"status": "failed", "reason": "check printed [/x] and \x1b[2J"}
    (project / STATE).write_text(json.dumps(state))

    result = run_cli(["status"], project)

    _no_traceback(result)
    assert result.code == 0, result.stderr
    assert "check printed [/x] and \\x1b[2J" in result.stdout and "\x1b" not in result.stdout


def test_the_live_view_prints_a_warning_that_quotes_markup_as_text(capsys):
    # In a terminal, warnings go through rich; a path or check output holding "[/x]" is text.
    renderer = LiveRenderer()
    renderer.handle(Notice(type="warning", ts=0, message="a[/x]/state.json unreadable"))
    renderer.close()

    assert "a[/x]/state.json unreadable" in capsys.readouterr().err


# ---- crafted specs ---------------------------------------------------------------------------

CRAFTED_FEATURES = [
    ({"id": "../../etc/passwd"}, "features[0].id: contains a path separator"),
    ({"id": "a/b"}, "features[1].id: contains a path separator"),
    ({"id": "a\x00b"}, "features[2].id: contains a control character"),
    ({"id": "x" * 5000}, "features[3].id: is 5000 characters long; the limit is 100"),
    ({"id": "ok", "verify": "true\x00; rm -rf ~"}, "features[4].verify: contains a NUL byte"),
    ({"id": "ok-2", "depends_on": ["../ok"]}, "features[5].depends_on[0]: contains a path separator"),
]


def test_crafted_specs_are_refused_with_every_problem_located_and_nothing_written(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    crafted = tmp_path / "crafted.json"
    crafted.write_text(json.dumps({"features": [{"name": "N", "description": "D", **f} for f, _ in CRAFTED_FEATURES]}))
    (tmp_path / "nested.json").write_bytes(NESTED + b"]" * 100_000)
    (tmp_path / "latin.json").write_bytes(b'{"features": [{"id": "caf\xe9"}]}')
    _sparse(tmp_path / "huge.json", MAX_SPEC_BYTES + 1)
    specs = {
        crafted: [problem for _, problem in CRAFTED_FEATURES],
        tmp_path / "nested.json": ["the JSON is nested too deeply"],
        tmp_path / "latin.json": ["byte 25: not UTF-8"],
        tmp_path / "huge.json": ["the file is larger than the limit of 10 MB"],
    }
    before = file_tree(tmp_path)

    for spec, problems in specs.items():
        # `run` reads the spec as `validate` does; it is tried on two of them, to see it write nothing.
        also_run = spec.name in ("crafted.json", "latin.json")
        for command in (["validate", str(spec)], *([["run", str(spec)]] if also_run else [])):
            result = run_cli(command, project)

            _no_traceback(result)
            assert result.code == 2, (command, result.stderr)
            header = f"orchestrate: error: {spec} is not a valid feature spec ({len(problems)} problem"
            assert result.stderr.startswith(header), result.stderr
            for problem in problems:
                _line_about(result.stderr, problem)
    # Nothing was written: no .autonomous/, no change anywhere.
    assert file_tree(tmp_path) == before


# ---- planted links ---------------------------------------------------------------------------


@pytest.mark.parametrize("linked", [".autonomous/state", ".autonomous"])
def test_a_linked_state_directory_is_refused_before_anything_is_written(project, tmp_path, linked):
    target = tmp_path / "outside" / "moved"
    shutil.move(project / linked, target)
    (project / linked).symlink_to(target, target_is_directory=True)
    before = file_tree(tmp_path / "outside")

    results = [run_cli(["run", "spec.json"], project), run_cli(["status"], project)]

    _no_traceback(*results)
    for result in results:
        assert result.code == 2 and not result.stdout, result.stderr
        _line_about(result.stderr, f"orchestrate: error: {project / linked} is a symbolic link (to {target})")
    assert file_tree(tmp_path / "outside") == before


def test_a_link_planted_during_the_run_stops_it_before_anything_is_written_through(fake_api, project, tmp_path):
    outside = tmp_path / "outside"
    # feat-03's check passes, then swaps the logs directory for a link to outside.
    swap = f"test -f features/feat-03.txt && mv {LOGS} {LOGS}.real && ln -s {outside} {LOGS}"
    write_spec(project, 3, extra={"feat-03": {"verify": swap}})
    before = file_tree(outside)

    # Without the sandbox, under which .autonomous/ is read-only and the swap fails: the
    # orchestrator's own refusal to write through a link is under test.
    result = run_cli(["run", "spec.json", "--sandbox", "none"], project, fake_api)

    _no_traceback(result)
    assert result.code == 2, result.stderr
    assert "feat-03" in result.stdout and fake_api.agent_requests("feat-03")
    _line_about(result.stderr, f"orchestrate: error: {project / LOGS} is a symbolic link (to {outside})",
                "never writes through a link")
    assert file_tree(outside) == before
