"""The fake's default summarizer writes a running summary a model could have written, so a run
against the fake prints no "the new summary is empty" warning; a test that wants an empty one
asks for it (`empty_summarizer`)."""

from __future__ import annotations

import json

from fake_messages_api.scripted_agent.summarizer import plausible_summary


def _request(previous: str, *logs: dict[str, object]) -> dict[str, object]:
    lines = "\n".join(json.dumps(log) for log in logs) or "(none)"
    prompt = (f"Summarization trigger: interval\n\n## Previous summary\n{previous}\n\n## Key decisions\n(none)\n\n"
              f"## Features since the last summary (one JSON log a line)\n{lines}")
    return {"messages": [{"role": "user", "content": [{"type": "text", "text": prompt}]}]}


def test_the_summary_counts_on_from_the_previous_one_and_names_the_latest_features() -> None:
    first = plausible_summary(_request("(none yet)", {"id": "a", "name": "Alpha", "status": "passed"}))
    assert first == "1 feature(s) summarized so far; latest: a (Alpha) passed."
    second = plausible_summary(_request(first, {"id": "b", "name": "Beta", "status": "failed"},
                                        {"id": "c", "status": "passed"}))
    assert second == "3 feature(s) summarized so far; latest: b (Beta) failed, c (c) passed."
    many = plausible_summary(_request(second, *({"id": f"f{n}", "status": "passed"} for n in range(50))))
    assert many.startswith("53 feature(s) summarized so far; latest: f40 (f40) passed,") and "f39" not in many


