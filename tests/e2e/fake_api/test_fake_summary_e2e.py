"""The fake's default summarizer writes a running summary a model could have written, so a run
against the fake prints no "the new summary is empty" warning; a test that wants an empty one
asks for it (`empty_summarizer`)."""

from __future__ import annotations

import json
from pathlib import Path

from fake_messages_api.scripted_agent.summarizer import empty_summarizer
from tests.cli_helpers import run_cli, write_spec

SUMMARY = Path(".autonomous/context/running-summary.json")


def test_a_run_against_the_fake_keeps_the_default_summary(fake_api, tmp_path) -> None:
    spec = write_spec(tmp_path, 2)

    result = run_cli(["run", str(spec), "--summarize-every", "1"], tmp_path, fake_api)

    assert result.code == 0, result.stderr
    assert "summary is empty" not in result.stderr
    stored = json.loads((tmp_path / SUMMARY).read_text())
    assert stored["source"] == "model"
    assert stored["summary"].startswith("2 feature(s) summarized so far; latest: ")


def test_an_empty_summary_asked_for_is_refused_with_a_warning(fake_api, tmp_path) -> None:
    fake_api.summarizer = empty_summarizer
    spec = write_spec(tmp_path, 1)

    result = run_cli(["run", str(spec)], tmp_path, fake_api)

    assert result.code == 0, result.stderr
    assert "the new summary is empty" in result.stderr
