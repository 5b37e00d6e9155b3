"""The N of `--jobs N` counts features at work, not features waiting for the merge queue; and
the run's end summary runs beside its final verification.

Units for `WorkerSlots`, then the real CLI: a feature starts while another is being merged, no
more than N are ever at work, and the end summary's call is in flight while the final
verification's checks run.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

from fake_messages_api.scripted_agent.forced_tools import ScriptedToolAnswers
from fake_messages_api.scripted_agent.plans import bash, report
from orchestrator.run.checks.running.check_pool import check_runner, run_checks
from tests.cli_helpers import plain_summarizer, run_cli, write_spec
from tests.environments import unsandboxed


def test_checks_in_a_scratch_tree_are_not_put_back(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "kept.txt").write_text("x\n")
    run_checks([("a", "rm kept.txt")], tmp_path, check_runner(unsandboxed(tmp_path), 5.0), 1)
    assert (tmp_path / "kept.txt").exists()  # the project's tree: put back
    run_checks([("a", "rm kept.txt")], tmp_path, check_runner(unsandboxed(tmp_path), 5.0), 1, put_back=False)
    assert not (tmp_path / "kept.txt").exists()  # a scratch tree (the merge queue's): left as the check left it


def _slow_in_integration(fid: str) -> str:
    """A check that takes half a second in the merge queue's integration worktree, so merges are slow:
    not a worker's worktree, yet with a `.git` (final verification's checkout has none; in the sandbox
    the integration tree is seen at the live project's path)."""
    return (f'test -f features/{fid}.txt && case "$PWD" in */.autonomous/worktrees/*) ;; '
            '*) if [ -e .git ]; then sleep 0.5; fi;; esac')


def test_the_next_feature_starts_while_one_is_merged_and_never_more_than_n_at_work(tmp_path: Path, fake_api: Any) -> None:
    extra = {f"feat-{i:02d}": {"verify": _slow_in_integration(f"feat-{i:02d}")} for i in range(1, 5)}
    spec = write_spec(tmp_path, 4, extra=extra)
    root = tmp_path / "project"
    result = run_cli(["run", str(spec), "-j", "2", "--json", "--project-dir", str(root)], cwd=tmp_path, fake=fake_api)
    assert result.code == 0, result.stderr[-3000:]
    events = result.events()
    at_work: set[str] = set()  # from feature_started to its passing check in its worktree
    alive: set[str] = set()  # from feature_started to feature_finished: at work or being merged
    most_at_work = most_alive = 0
    for event in events:
        if event["type"] == "feature_started":
            at_work.add(event["id"])
            alive.add(event["id"])
        elif event["type"] == "verification" and event["success"]:
            at_work.discard(event["id"])  # from here on it is git's and the re-check's
        elif event["type"] == "feature_finished":
            alive.discard(event["id"])
        most_at_work, most_alive = max(most_at_work, len(at_work)), max(most_alive, len(alive))
    assert most_at_work <= 2
    assert most_alive > 2, "no feature started while another waited for the merge queue"
    assert fake_api.feature_calls == {f"feat-{i:02d}": 3 for i in range(1, 5)}


def test_a_dependent_gets_the_slot_of_the_feature_it_waits_for_before_features_behind_it(
    tmp_path: Path, fake_api: Any
) -> None:
    """feat-02 waits for feat-01; feat-04 holds the other slot until feat-02 has started (or a
    minute has passed). With two slots, the one feat-01 had goes to feat-02 once feat-01 is
    merged, not to feat-05 while feat-01 is being merged. (It was two seconds of sleep: under
    load feat-01's merge took longer, and feat-05 rightly took feat-04's freed slot.)"""
    spec = write_spec(tmp_path, 5, extra={"feat-02": {"depends_on": ["feat-01"]}})
    root = tmp_path / "project"
    events = root / ".autonomous" / "events.jsonl"
    wait = f"for i in $(seq 600); do grep -q '\"feature_started\".*\"feat-02\"' {events} && break; sleep 0.1; done"
    fake_api.plans["feat-04"] = [[bash(f"{wait}; mkdir -p features && echo done > features/feat-04.txt")],
                                 [report("Implemented feat-04")]]
    # Unsandboxed: feat-04's wait reads the live project's event log (the sandbox keeps it hidden).
    args = ["run", str(spec), "-j", "2", "--json", "--project-dir", str(root), "--sandbox", "none"]
    result = run_cli(args, cwd=tmp_path, fake=fake_api)
    assert result.code == 0, result.stderr[-3000:]
    starts = [e["id"] for e in result.events() if e["type"] == "feature_started"]
    assert starts.index("feat-02") < starts.index("feat-05"), starts


def test_a_feature_a_dependent_awaits_whose_merge_conflicts_is_redone_and_its_dependent_follows(
    tmp_path: Path, fake_api: Any
) -> None:
    """feat-01 (awaited by feat-02) and feat-03 append to the same file at once: whichever merges
    second conflicts and is redone; feat-02 starts only after feat-01 is merged, and all pass.
    The focused conflict step is given an unusable answer, so the conflict costs a new attempt."""
    fake_api.tool_answers = ScriptedToolAnswers({}, fallback=lambda _name, _request: {"hunks": []})
    root = tmp_path / "project"
    root.mkdir()
    checks = {fid: {"verify": f"grep -qx {fid} \"$(echo share)d.txt\"", "max_attempts": 4} for fid in ("feat-01", "feat-03")}
    spec = write_spec(tmp_path, 3, extra={**checks, "feat-02": {"depends_on": ["feat-01"]}})
    for fid in ("feat-01", "feat-03"):
        fake_api.plans[fid] = [[bash(f"echo {fid} >> shared.txt")], [report(f"appended {fid}")]]
    result = run_cli(["run", str(spec), "-j", "2", "--json"], cwd=root, fake=fake_api)
    assert result.code == 0, result.stderr[-3000:]
    assert sorted((root / "shared.txt").read_text().splitlines()) == ["feat-01", "feat-03"]
    events = result.events()
    assert [e["result"] for e in events if e["type"] == "merge"].count("conflict") == 1  # they started together
    merged = next(i for i, e in enumerate(events) if e["type"] == "merge" and e["id"] == "feat-01" and e["result"] == "merged")
    started = next(i for i, e in enumerate(events) if e["type"] == "feature_started" and e["id"] == "feat-02")
    assert merged < started


def test_the_end_summary_runs_beside_the_final_verification(tmp_path: Path, fake_api: Any) -> None:
    """The final verification's check (the only one run in the project root) passes only once the
    end summary's call has reached the fake: one after the other, it would wait in vain and fail."""
    flag = tmp_path / "summary-began"

    def summarizer(request: dict[str, Any]) -> dict[str, Any]:
        flag.write_text("yes\n")
        time.sleep(1)  # still in flight while the checks run
        return plain_summarizer(request)

    fake_api.summarizer = summarizer
    # A worker's worktree and the merge queue's integration tree have a `.git`; final verification's
    # checkout has none (in the sandbox all three are seen at the live project's path, so `$PWD` cannot tell).
    waits = f'[ -e .git ] && exit 0; for i in $(seq 100); do [ -e "{flag}" ] && exit 0; sleep 0.1; done; exit 1'
    spec = write_spec(tmp_path, 2, extra={"feat-01": {"verify": f"test -f features/feat-01.txt && {{ {waits}; }}"}})
    root = tmp_path / "project"
    result = run_cli(["run", str(spec), "-j", "2", "--json", "--project-dir", str(root)], cwd=tmp_path, fake=fake_api)
    assert result.code == 0, result.stderr[-3000:]
    events = result.events()
    final = next(e for e in events if e["type"] == "final_verification")
    assert final["failed"] == [] and final["checked"] == 2
    summaries = [e for e in events if e["type"] == "summarization"]
    assert [e["trigger"] for e in summaries] == ["end"] and summaries[0]["success"]
    assert sorted(summaries[0]["features"]) == ["feat-01", "feat-02"]
