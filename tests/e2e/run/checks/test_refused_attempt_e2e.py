"""An attempt refused before its check could decide says what refused it (issue 41): it has no
exit status, and "check FAILED (exit None)" told the reader nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fake_messages_api.scripted_agent.plans import bash, report
from tests.cli_helpers import run_cli, write_spec

CHECK = "bash checks/feat-01.sh"


def test_an_attempt_that_changed_its_check_says_the_protected_files_guard_refused_it(
    fake_api: Any, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    (project / "checks").mkdir(parents=True)
    (project / "checks" / "feat-01.sh").write_text("test -f features/feat-01.txt\n")
    fake_api.plans["feat-01"] = [[bash("echo 'exit 0' > checks/feat-01.sh")], [report("Implemented feat-01")]]
    spec = write_spec(tmp_path, 1, verify=CHECK)

    result = run_cli(["run", str(spec), "--sandbox", "none", "--max-attempts", "1"], project, fake_api)

    assert result.code == 1, result.stdout + result.stderr
    assert "check REFUSED by the protected-files guard: protected files changed by the agent" in result.stdout
    assert "exit None" not in result.stdout
    shown = run_cli(["logs", "feat-01"], project).stdout
    assert f"check `{CHECK}` REFUSED by the protected-files guard" in shown and "exit None" not in shown
    events = [json.loads(line) for line in (project / ".autonomous/events.jsonl").read_text().splitlines()]
    [verification] = [event for event in events if event["type"] == "verification"]
    assert verification["refusedBy"] == "the protected-files guard" and verification["exitCode"] is None
