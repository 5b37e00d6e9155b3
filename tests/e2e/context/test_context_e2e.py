"""The Context Agent end to end (issue 5): through the CLI, against the fake Messages API.

Memory recorded as features happen survives summarization by a summarizer that rewrites and
leaves things out; the injection stays within budget; a summarizer that is down, a corrupted
or unwritable store, and an injection that raises never stop the run; `orchestrate context`
and `orchestrate summarize` do what they say.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from context_agent.budget import INJECTION_BUDGET, MAX_STORED_DECISIONS
from context_agent.project_memory import ContextAgent
from fake_messages_api.faults import Fault
from fake_messages_api.scripted_agent.plans import edit_create, report, text
from shared_base.model_ids import DEFAULT_SUMMARIZER_MODEL
from shared_base.tokens import estimate_tokens
from tests.cli_helpers import cli_env, first_prompt, read_events, read_json, run_cli, write_spec

CONTEXT = ".autonomous/context"
FAILS_FIRST = "feat-07"
READY_CHECK = "sh checks/ready.sh"

# Two decisions and one constraint per feature, all distinct: 24 decisions, more than the
# store's cap of 20, so the cap's rule (the most recent are kept) is exercised.
DECISIONS = {
    "feat-01": ["Widgets are stored as JSON files under data/widgets", "Widget ids are UUID4 strings"],
    "feat-02": ["The HTTP layer uses the standard library http.server", "Routes live in widget/routes.py"],
    "feat-03": ["Prices are integers counted in cents", "Validation errors return HTTP 422 with a field map"],
    "feat-04": ["Timestamps are UTC ISO 8601 strings ending in Z", "Listings paginate with limit and cursor"],
    "feat-05": ["Configuration is read from widget.toml at startup", "Logging goes through the widget.log helper"],
    "feat-06": ["The frontend is plain HTML with one app.js bundle", "Templates are rendered with string.Template"],
    "feat-07": ["Exports are written as CSV with a header row", "Export jobs run synchronously in the request"],
    "feat-08": ["Search matches widget names case-insensitively", "Search results are sorted by score then name"],
    "feat-09": ["Deleted widgets get a deletedAt field instead of removal", "Trash is emptied after thirty days"],
    "feat-10": ["Authentication uses signed session cookies", "Passwords are hashed with PBKDF2 SHA-256"],
    "feat-11": ["Images are resized to 512 pixel thumbnails", "Thumbnails are cached in data/thumbs"],
    "feat-12": ["The dashboard polls the stats endpoint every ten seconds", "Charts are drawn with inline SVG"],
}
CONSTRAINTS = {
    "feat-01": "Only the Python standard library may be used",
    "feat-02": "Every endpoint answers JSON with a content-type header",
    "feat-03": "Money is never stored as a float",
    "feat-04": "Public API field names stay camelCase",
    "feat-05": "Secrets are never written to logs",
    "feat-06": "Pages work without JavaScript frameworks",
    "feat-07": "Exports never hold more than 10000 rows in memory",
    "feat-08": "Search answers within 200 ms for 10000 widgets",
    "feat-09": "Nothing is ever hard-deleted from data/widgets",
    "feat-10": "Every write endpoint requires an authenticated session",
    "feat-11": "Uploads larger than 5 MB are rejected with HTTP 413",
    "feat-12": "The dashboard never calls write endpoints",
}
RETRY_SUMMARY = "Marked the export ready after the check failed."
RETRY_NOTES = "The ready check greps features/feat-07.txt for the word ready."


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "checks").mkdir(parents=True)
    (root / "checks/ready.sh").write_text(
        f"grep -q ready features/{FAILS_FIRST}.txt || "
        f'{{ echo "error: export marker features/{FAILS_FIRST}.txt is not ready"; exit 1; }}\n'
    )
    return root


# --- helpers -----------------------------------------------------------------------------------

STORE_NAMES = ("running-summary", "key-decisions", "failure-memory", "active-constraints")


def read_stores(project: Path) -> dict[str, Any]:
    """The four stores as they are on disk now (None for a missing one)."""
    return {
        name: (read_json(path) if (path := project / CONTEXT / f"{name}.json").is_file() else None)
        for name in STORE_NAMES
    }


def memory_now(project: Path) -> dict[str, Any]:
    """The four stores as the next feature sees them: on disk, with the reports recorded since
    the last summarization (context/pending-reports.jsonl) applied."""
    memory = ContextAgent(project, on_event=lambda kind, data: None).memory()
    stores = (memory.summary, memory.decisions, memory.failures, memory.constraints)
    return {name: store.model_dump(by_alias=True, mode="json") for name, store in zip(STORE_NAMES, stores, strict=False)}


def decision_texts(stores: dict[str, Any]) -> list[str]:
    return [item["text"] for item in (stores["key-decisions"] or {}).get("decisions", [])]


def constraint_texts(stores: dict[str, Any]) -> list[str]:
    return [item["description"] for item in (stores["active-constraints"] or {}).get("constraints", [])]


def reported_before(feature_id: str) -> list[str]:
    """Every decision reported by the features before `feature_id`, oldest first."""
    return [d for fid in sorted(DECISIONS) if fid < feature_id for d in DECISIONS[fid]]


def memory_plan(project: Path, snapshots: dict[str, dict[str, Any]]):
    """Every feature writes its file and reports its own decisions and constraint. FAILS_FIRST
    writes a draft its check rejects, then, seeing the failure, the ready marker. At the start
    of each first attempt the plan takes a snapshot of the stores: what memory holds then."""

    def plan(turn):
        fid, retry = turn.feature_id, turn.last_verification is not None
        if turn.step == 0:
            if not retry:
                snapshots[fid] = memory_now(project)
            content = "draft\n" if fid == FAILS_FIRST and not retry else "ready\n"
            return [edit_create(f"features/{fid}.txt", content)]
        if turn.step == 1:
            if fid == FAILS_FIRST and retry:
                return [report(RETRY_SUMMARY, DECISIONS[fid], [CONSTRAINTS[fid]], notes=RETRY_NOTES,
                               prevention=RETRY_NOTES)]
            return [report(f"Built {fid} of the widget service.", DECISIONS.get(fid, []),
                           [CONSTRAINTS[fid]] if fid in CONSTRAINTS else [])]
        return [text(f"{fid} is done.")]

    return plan


def project_context(prompt: str) -> str:
    """The `## Project Context` section of a prompt ("" when there is none)."""
    start = prompt.find("## Project Context")
    if start < 0:
        return ""
    end = prompt.find("\n## ", start)
    return prompt[start:] if end < 0 else prompt[start:end]


def block_lines(section: str, heading: str) -> list[str]:
    """The `- ` lines under a bold heading of the Project Context section."""
    if heading not in section:
        return []
    block = section.split(heading, 1)[1].strip("\n").split("\n\n", 1)[0]
    return [line[2:] for line in block.splitlines() if line.startswith("- ")]


def user_text(request: dict[str, Any]) -> str:
    content = request["messages"][0]["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def context_events(project: Path, source: str) -> list[dict[str, Any]]:
    return [e for e in read_events(project) if e["type"] in ("warning", "error") and e.get("source") == source]


class ParaphrasingSummarizer:
    """A summarizer that does not trust deltas: it rewrites the summary in its own words and
    leaves out a third of the features, and "restates" two thirds of the stored decisions and
    constraints as new items, reworded and reordered (a different third omitted each call).
    It never retires anything, so everything the agent reported must survive the merge."""

    def __init__(self) -> None:
        self.prompts: list[str] = []
        self.summaries: list[str] = []
        self.restated_decisions = self.restated_constraints = 0

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        prompt = user_text(request)
        self.prompts.append(prompt)
        call = len(self.prompts)
        decisions = re.findall(r"^- \[D\d+\] \(Feature ([\w-]+)\) (.+)$", prompt, re.M)
        constraints = re.findall(r"^- \[C\d+\] (.+)$", prompt, re.M)
        logs_block = prompt.split("## Features since the last summary (one JSON log a line)\n", 1)[1]
        logs = [json.loads(line) for line in logs_block.splitlines() if line.startswith("{")]
        kept_logs = [log for index, log in enumerate(logs) if index % 3 != call % 3]
        summary = (
            f"Summary {call} of the widget service. "
            + " ".join(f"{log['name']} ({log['id']}) is {log['status']}." for log in reversed(kept_logs))
        )
        self.summaries.append(summary)
        new_decisions = [
            {"text": _reword(text), "featureId": fid}
            for index, (fid, text) in enumerate(reversed(decisions)) if index % 3 != call % 3
        ]
        new_constraints = [
            {"description": _reword(text), "featureId": ""}
            for index, text in enumerate(reversed(constraints)) if index % 3 != call % 3
        ]
        self.restated_decisions += len(new_decisions)
        self.restated_constraints += len(new_constraints)
        return {
            "summary": summary,
            "newDecisions": new_decisions,
            "retiredDecisionIds": [],
            "newConstraints": new_constraints,
            "retiredConstraintIds": [],
            "newFailures": [
                {"featureId": log["id"], "description": f"{log['id']} failed its check at first",
                 "prevention": "Run the check before reporting"}
                for log in logs if log.get("attempts", 0) > 1
            ],
            "preventions": [],
        }


def _reword(text: str) -> str:
    """The same statement in other words: a preamble, the clause order rotated."""
    words = text.rstrip(".").split()
    half = len(words) // 2
    return "As agreed earlier, " + " ".join([*words[half:], "-", *words[:half]]) + "."


# --- the twelve-feature run ------------------------------------------------------------------

def test_twelve_feature_run_keeps_what_matters_through_three_summarizations(fake_api, project):
    snapshots: dict[str, dict[str, Any]] = {}
    summarizer = ParaphrasingSummarizer()
    fake_api.default_plan = memory_plan(project, snapshots)
    fake_api.summarizer = summarizer
    spec = write_spec(project, 12, extra={FAILS_FIRST: {"verify": READY_CHECK}})

    result = run_cli(["run", str(spec)], project, fake_api)

    assert result.code == 0, result.stderr
    assert not fake_api.errors
    state = read_json(project / ".autonomous/state/execution-state.json")
    assert state["features"][FAILS_FIRST]["attempts"] == 2
    triggers = [(e["trigger"], e["features"], e["success"]) for e in read_events(project) if e["type"] == "summarization"]
    ids = [f"feat-{n:02d}" for n in range(1, 13)]
    assert triggers == [("every-5", ids[:5], True), ("every-5", ids[5:10], True), ("end", ids[10:], True)]
    summarizer_requests = [r for r in fake_api.requests if r.kind == "summarizer"]
    assert [r.body["model"] for r in summarizer_requests] == [DEFAULT_SUMMARIZER_MODEL] * 3
    # Each summarization is given the previous summary and the stored items.
    assert f"## Previous summary\n{summarizer.summaries[0]}" in summarizer.prompts[1]
    assert "(Feature feat-01) Widgets are stored as JSON files under data/widgets" in summarizer.prompts[1]

    # The four stores exist and are valid JSON.
    stores = read_stores(project)
    assert all(stores[name] is not None for name in stores), sorted(n for n, s in stores.items() if s is None)

    # Memory is recorded as features happen, and what the agent reported survives every
    # summarization: at the start of each feature (6 and 11 come right after the summarizations
    # at 5 and 10) and at the end, the stores hold the most recent 20 reported decisions, never
    # a restatement in their place, and every reported constraint, each once.
    final = {**snapshots, "end": stores}
    for when in [*ids[1:], "end"]:
        held = final[when]
        reported = reported_before(when if when != "end" else "feat-99")
        expected_constraints = [CONSTRAINTS[fid] for fid in ids if fid < when or when == "end"]
        assert sorted(decision_texts(held)) == sorted(reported[-MAX_STORED_DECISIONS:]), when
        assert sorted(constraint_texts(held)) == sorted(expected_constraints), when
    assert all(d["source"] == "report" for d in stores["key-decisions"]["decisions"])
    assert not stores["active-constraints"]["retired"]

    # The failed-first feature is in failure memory, described from the check's output, with
    # what its passing attempt reported as the prevention (its `prevention` field; not the summarizer's,
    # not the default).
    failures = [f for f in stores["failure-memory"]["failures"] if f["featureId"] == FAILS_FIRST]
    assert len(failures) == 1
    assert "is not ready" in failures[0]["description"]
    assert failures[0]["preventionSource"] == "agent"
    assert failures[0]["prevention"] in (RETRY_SUMMARY, RETRY_NOTES)

    # The summary is the model's, within the store's cap.
    assert stores["running-summary"]["source"] == "model"
    assert stores["running-summary"]["summary"] == summarizer.summaries[-1]

    # Every prompt from the second on carries the context within budget, listing every
    # constraint active at that point; the failure to avoid is not shown once its feature has
    # passed, as none of the later features builds on it (issue 42).
    injection_tokens = {}
    for index, fid in enumerate(ids[1:], start=2):
        section = project_context(first_prompt(fake_api, fid))
        injection_tokens[fid] = estimate_tokens(section)
        assert section and injection_tokens[fid] <= INJECTION_BUDGET, fid
        listed = block_lines(section, "**Active Constraints:**")
        assert sorted(listed) == sorted(CONSTRAINTS[f] for f in ids[: index - 1]), fid
        assert len(block_lines(section, "**Key Decisions:**")) <= 3
    twelfth = project_context(first_prompt(fake_api, "feat-12"))
    assert not block_lines(twelfth, "**Recent Failures to Avoid:**")
    assert "not shown" not in twelfth
    assert "## Project Context" not in first_prompt(fake_api, "feat-01")

    all_reported = reported_before("feat-99")
    kept = set(decision_texts(stores)) & set(all_reported)
    print(
        f"\n12th prompt's Project Context: {injection_tokens['feat-12']} tokens (budget {INJECTION_BUDGET}); "
        f"decisions kept {len(kept)}/{len(all_reported)} reported "
        f"({len(set(all_reported[-MAX_STORED_DECISIONS:]) & kept)}/{MAX_STORED_DECISIONS} of the most recent), "
        f"constraints kept {len(constraint_texts(stores))}/{len(CONSTRAINTS)}; restatements offered by the "
        f"summarizer and dropped: {summarizer.restated_decisions} decisions, {summarizer.restated_constraints} constraints"
    )


# --- a summarizer that fails ------------------------------------------------------------------

def _down_for_the_first_summarization(call_index: int, request: dict[str, Any] | None) -> Fault | None:
    # Only structured-output calls (the summarizer) can fail, and only those of the first
    # summarization (the one given feat-01's log), every time, retries included.
    if request and "output_config" in request and '"id": "feat-01"' in user_text(request):
        return Fault.http(500)
    return None


def _garbage_answers():
    """The second summarization gets an answer that is not JSON; the third one JSON of the
    wrong shape."""
    answers = iter(['Here is the summary: {"summary": "half'])
    return lambda request: next(answers, {"summary": 42, "newDecisions": "none"})


def test_a_summarizer_that_is_down_or_answers_garbage_leaves_a_fallback_summary(fake_api, project):
    fake_api.default_plan = memory_plan(project, {})
    fake_api.faults = _down_for_the_first_summarization
    fake_api.summarizer = _garbage_answers()
    spec = write_spec(project, 3)

    result = run_cli(["run", str(spec), "--summarize-every", "1"], project, fake_api)

    assert result.code == 0, result.stderr
    assert "3 passed" in result.stdout
    assert not fake_api.errors
    assert fake_api.summarizer_calls > 3  # the first one was retried
    # Each failure is reported on stderr and in the event log, and the run said "fallback".
    expected = ["500", "not JSON", "does not match the schema"]
    reported = [line for line in result.stderr.splitlines() if "context agent" in line and "summar" in line]
    assert len(reported) == 3 and all(word in line for word, line in zip(expected, reported, strict=False)), result.stderr
    failed = context_events(project, "summarizer.failed")
    assert len(failed) == 3 and all(word in e["message"] for word, e in zip(expected, failed, strict=False)), failed
    runs = [e for e in read_events(project) if e["type"] == "summarization"]
    assert [(e["features"], e["success"], bool(e["error"])) for e in runs] == [
        ([f"feat-0{n}"], False, True) for n in (1, 2, 3)
    ]
    assert result.stdout.count("fallback") == 3
    # The fallback summary, built from the logs, covers every feature; the reports are all kept.
    stores = read_stores(project)
    summary = stores["running-summary"]
    assert summary["source"] == "fallback" and summary["featuresSummarized"] == 3
    for index in (1, 2, 3):
        assert f"feat-0{index} (Feature {index}): passed." in summary["summary"]
    assert sorted(decision_texts(stores)) == sorted(reported_before("feat-04"))
    assert sorted(constraint_texts(stores)) == sorted(CONSTRAINTS[f"feat-0{n}"] for n in (1, 2, 3))
    # The next feature already got the fallback summary.
    assert "feat-01 (Feature 1): passed." in project_context(first_prompt(fake_api, "feat-02"))


# --- corrupted and unwritable stores -----------------------------------------------------------

CORRUPTIONS = {
    "key-decisions.json": (b'{"decisions": [{"id": "D1", "text": "half', "not valid JSON"),
    "failure-memory.json": (b'{"failures": [], "note": "\xff\xfe caf\xe9"}', "not UTF-8"),
    "active-constraints.json": (json.dumps({"constraints": "Python only"}).encode(), "not a ActiveConstraints store"),
}


def test_corrupted_stores_are_backed_up_an_unwritable_one_costs_only_itself(fake_api, project):
    fake_api.default_plan = memory_plan(project, {})
    context = project / CONTEXT
    context.mkdir(parents=True)
    for name, (content, _) in CORRUPTIONS.items():
        (context / name).write_bytes(content)
    # A directory where the running summary should be: it can be neither read nor replaced.
    (context / "running-summary.json").mkdir()
    spec = write_spec(project, 3)

    result = run_cli(["run", str(spec)], project, fake_api)

    assert result.code == 0, result.stderr
    assert "3 passed" in result.stdout
    # Each corrupted store is moved to backups/ as it was, and reported on stderr and in the log.
    backups = list((project / ".autonomous/backups").iterdir())
    assert len(backups) == len(CORRUPTIONS), backups
    for name, (content, problem) in CORRUPTIONS.items():
        mine = [path for path in backups if path.name.startswith(f"{name}.corrupt-")]
        assert len(mine) == 1 and mine[0].read_bytes() == content, name
        assert any(name in line and problem in line for line in result.stderr.splitlines()), (name, result.stderr)
    corrupt = context_events(project, "context.store_corrupt")
    assert sorted(Path(e["details"]["file"]).name for e in corrupt) == sorted(CORRUPTIONS)
    # The unwritable store is reported too, and costs only itself: the other stores are
    # rebuilt from what the run recorded, and the next features get them.
    assert context_events(project, "context.store_unreadable")
    assert context_events(project, "summarizer.failed")
    assert "running-summary.json" in result.stderr
    stores = read_stores(project)
    assert sorted(decision_texts(stores)) == sorted(reported_before("feat-04"))
    assert sorted(constraint_texts(stores)) == sorted(CONSTRAINTS[f"feat-0{n}"] for n in (1, 2, 3))
    third = project_context(first_prompt(fake_api, "feat-03"))
    assert sorted(block_lines(third, "**Active Constraints:**")) == sorted([CONSTRAINTS["feat-01"], CONSTRAINTS["feat-02"]])


# Runs the real CLI with the injection builder broken, as a bug in it would break it.
_BROKEN_INJECTION = """
import sys
import context_agent.project_memory as agent
def broken(*args, **kwargs):
    raise RuntimeError("injection exploded")
agent.build_injection = broken
sys.argv = ["orchestrate", *sys.argv[1:]]
from orchestrator.cli.commands import main
main()
"""


def test_an_injection_that_raises_never_stops_the_run(fake_api, project):
    fake_api.default_plan = memory_plan(project, {})
    spec = write_spec(project, 3)

    proc = subprocess.run(
        [sys.executable, "-c", _BROKEN_INJECTION, "run", str(spec)], cwd=project, env=cli_env(fake_api),
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )

    assert proc.returncode == 0, proc.stderr
    assert "3 passed" in proc.stdout
    # The base prompt is used: the feature section is there, the context is not.
    for fid in ("feat-01", "feat-02", "feat-03"):
        prompt = first_prompt(fake_api, fid)
        assert f"ID: {fid}" in prompt and "## Project Context" not in prompt
    assert proc.stderr.count("injection exploded") == 3, proc.stderr
    failed = context_events(project, "context.injection_failed")
    assert [e["details"]["featureId"] for e in failed] == ["feat-01", "feat-02", "feat-03"]
    # Recording is unaffected: memory is there for when injection works again.
    assert sorted(constraint_texts(read_stores(project))) == sorted(CONSTRAINTS[f"feat-0{n}"] for n in (1, 2, 3))


# --- `orchestrate context` and `orchestrate summarize` ---------------------------------------------

def _manual_summarizer(request: dict[str, Any]) -> dict[str, Any]:
    return {
        "summary": "Manual summary: the widget service stores, serves and prices widgets.",
        "newDecisions": [{"text": "Widget prices are shown with two decimals", "featureId": "feat-03"}],
        "retiredDecisionIds": [], "newConstraints": [], "retiredConstraintIds": [],
        "newFailures": [], "preventions": [],
    }


def test_context_and_summarize_commands_on_a_finished_run(fake_api, project):
    fake_api.default_plan = memory_plan(project, {})
    spec = write_spec(project, 4)
    assert run_cli(["run", str(spec), "--only", "feat-01,feat-02,feat-03"], project, fake_api).code == 0
    assert fake_api.summarizer_calls == 1  # the end of the run

    # `orchestrate context FEATURE`: the injection the feature would get, and its token count.
    shown = run_cli(["context", "feat-04"], project, None, key=None)

    assert shown.code == 0, shown.stderr
    header = "=== compressed: feature feat-04 ===\n"
    assert shown.stdout.startswith(header)
    section, count_line = shown.stdout[len(header):].split("\ntokenCount: ", 1)
    count = int(count_line.split("\n", 1)[0])
    assert section.startswith("## Project Context\n\n**Summary:**")
    assert count == estimate_tokens(section) and 0 < count <= INJECTION_BUDGET
    assert sorted(block_lines(section, "**Active Constraints:**")) == sorted(
        CONSTRAINTS[f"feat-0{n}"] for n in (1, 2, 3)
    )
    assert 0 < len(block_lines(section, "**Key Decisions:**")) <= 3
    unknown = run_cli(["context", "feat-99"], project, None, key=None)
    assert unknown.code == 2 and "unknown feature 'feat-99'" in unknown.stderr
    print(f"\norchestrate context feat-04: tokenCount {count}")

    # `orchestrate summarize` without a key: a one-line error, exit 2, nothing touched.
    before = read_stores(project)
    no_key = run_cli(["summarize"], project, fake_api, key=None)
    assert no_key.code == 2
    assert "ANTHROPIC_API_KEY" in no_key.stderr and len(no_key.stderr.strip().splitlines()) == 1
    assert read_stores(project) == before and fake_api.summarizer_calls == 1

    # Not beside a live run, which records into the same stores.
    fake_api.summarizer = _manual_summarizer
    lock = project / ".autonomous/state/run.lock"
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        lock.write_text(json.dumps({"pid": sleeper.pid, "host": socket.gethostname(),
                                    "startedAt": int(time.time() * 1000)}))
        busy = run_cli(["summarize"], project, fake_api)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert busy.code == 2 and f"pid {sleeper.pid}" in busy.stderr, busy.stderr
    assert fake_api.summarizer_calls == 1 and read_stores(project) == before

    # `orchestrate summarize`: one summarizer call now, merged into the stores (the lock left
    # by the dead process is taken over).
    summarized = run_cli(["summarize"], project, fake_api)

    assert summarized.code == 0, summarized.stderr
    assert "summarized 3 feature(s): ok" in summarized.stdout
    assert "stale lock" in summarized.stderr
    assert fake_api.summarizer_calls == 2
    request = [r for r in fake_api.requests if r.kind == "summarizer"][-1].body
    assert "Summarization trigger: manual" in user_text(request)
    stores = read_stores(project)
    summary = stores["running-summary"]
    assert summary["summary"].startswith("Manual summary:") and summary["trigger"] == "manual"
    added = [d for d in stores["key-decisions"]["decisions"] if d["source"] == "summarizer"]
    assert [(d["text"], d["featureId"]) for d in added] == [("Widget prices are shown with two decimals", "feat-03")]
    assert set(decision_texts(before)) < set(decision_texts(stores))
    assert constraint_texts(stores) == constraint_texts(before)
    state = read_json(project / ".autonomous/state/execution-state.json")
    assert state["summarization"]["summaries"] == 2
    # The manual summary's call is counted like any other: in the calls, and in its model's share.
    totals = state["totals"]
    assert totals["apiCalls"] == len(fake_api.requests) == sum(share["calls"] for share in totals["byModel"].values())
    logged = [e for e in read_events(project) if e["type"] == "summarization"]
    assert [(e["trigger"], e["success"]) for e in logged] == [("end", True), ("manual", True)]
    assert not lock.exists()


def test_summarize_command_with_nothing_to_summarize_exits_2(fake_api, project):
    spec = write_spec(project, 1)

    result = run_cli(["summarize", "--spec", str(spec)], project, fake_api)

    assert result.code == 2
    assert "nothing to summarize" in result.stderr and "Traceback" not in result.stderr
    assert fake_api.summarizer_calls == 0
    assert not (project / ".autonomous").exists()
