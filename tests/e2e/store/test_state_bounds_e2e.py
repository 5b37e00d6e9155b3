"""The run state stays small however long the run: check output is kept in the feature logs,
not the state, and the journal is folded into the snapshot before it can pass its read limit."""

from __future__ import annotations

import json

from tests.cli_helpers import read_json, write_spec
from tests.in_process import run_in_process

LOUD_OUTPUT = "E   AssertionError: the widget is not ready\n" * 200  # well over the 4000-character tail


def test_a_run_whose_checks_fail_loudly_leaves_their_output_in_the_logs_not_the_state(fake_api, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "loud.sh").write_text(f"printf '{LOUD_OUTPUT[:60]}%.0s' $(seq 200); exit 1\n")
    spec = write_spec(project, 3, verify="sh loud.sh", max_attempts=2)
    result, paths = run_in_process(project, spec, fake_api)

    assert result.exit_code == 1
    state_text = paths.state_file.read_text()
    saved = json.loads(state_text)["features"]
    assert [saved[f"feat-0{n}"]["status"] for n in (1, 2, 3)] == ["failed"] * 3
    assert "the widget is not ready" not in state_text
    for n in (1, 2, 3):
        log = read_json(paths.feature_log(f"feat-0{n}"))
        assert "the widget is not ready" in log["verification"]["output"]
