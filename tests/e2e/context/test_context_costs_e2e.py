"""What the Context Agent costs: no summarizer call where its output is never used, a prompt
that does not repeat what the stores hold, and a bounded number of active constraints, each
one retired at the limit named, never dropped unnoticed.

Run with `-s` to see the counts.
"""

from __future__ import annotations

import pytest

from tests.cli_helpers import read_events, read_json, run_cli, write_spec

# ---- item 18: no summarizer call under window or replay ----------------------------------------

@pytest.mark.parametrize("strategy", ["window", "replay"])
@pytest.mark.slow
def test_window_and_replay_runs_send_no_summarizer_request_yet_keep_memory_folded(fake_api, project, strategy):
    spec = write_spec(project, 6)

    result = run_cli(["run", str(spec), "--context", strategy], project, fake_api)

    assert result.code == 0, result.stderr
    summarizer_requests = [r for r in fake_api.requests if r.kind == "summarizer"]
    summarizations = [e for e in read_events(project) if e["type"] == "summarization"]
    print(f"\n{strategy}: {len(summarizer_requests)} summarizer request(s), {len(summarizations)} fold(s)")
    assert summarizer_requests == []
    # The schedule still runs (every 5 and at the end), folding memory without a model: a later
    # compressed run starts from a current summary.
    assert [(e["trigger"], e["success"]) for e in summarizations] == [("every-5", True), ("end", True)]
    summary = read_json(project / ".autonomous/context/running-summary.json")
    assert summary["source"] == "fallback" and "feat-06" in summary["summary"]
    assert not (project / ".autonomous/context/pending-reports.jsonl").exists()


def test_a_compressed_run_still_calls_the_summarizer(fake_api, project):
    spec = write_spec(project, 5)

    assert run_cli(["run", str(spec)], project, fake_api).code == 0

    assert len([r for r in fake_api.requests if r.kind == "summarizer"]) == 1


# ---- item 18: the summarizer's prompt does not pay twice for the same text ---------------------


# ---- item 19: a hard limit on active constraints -----------------------------------------------


