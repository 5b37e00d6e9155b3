"""The per-feature costs a long run multiplies: fsyncs (a report is no longer fsynced into the
context stores: the feature log holds it), and `orchestrate status`, which reads the state
alone and draws one line per feature with a bounded amount of work each.

Run with `-s` to see the counts.
"""

from __future__ import annotations

from pathlib import Path

from tests.cli_helpers import plain_summarizer, write_spec
from tests.fsync_counter import FsyncCounter
from tests.in_process import run_in_process


def test_a_run_fsyncs_the_context_stores_only_when_it_summarizes(fake_api, tmp_path: Path, fsyncs: FsyncCounter) -> None:
    fake_api.summarizer = plain_summarizer
    project = tmp_path / "project"
    project.mkdir()
    spec = write_spec(project, 10)
    result, paths = run_in_process(project, spec, fake_api)

    assert result.exit_code == 0
    per_feature = {name: count / 10 for name, count in sorted(fsyncs.by_dir.items())}
    print(f"\nfsyncs per feature: {fsyncs.total / 10:.1f} in all, by directory {per_feature}")
    # Two summarizations (after 5 and 10 features), each writing the stores that changed (file
    # and directory): at most 8 each. Every report used to cost 4 or 6 more.
    assert fsyncs.by_dir["context"] <= 2 * 8
    assert not paths.context.pending_reports.exists()


# ---- orchestrate status -----------------------------------------------------------------------


