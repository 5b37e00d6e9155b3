"""Issue 29 item 3: several plain pytest checks run as one pytest process, each verdict mapped back
to its feature, and one process per check whenever the combined run cannot settle it."""

from __future__ import annotations

import json
from pathlib import Path

from orchestrator.run.checks.running.check_batch import plan_batches
from orchestrator.run.checks.running.pytest_command import pytest_invocation


def test_which_commands_are_plain_pytest_invocations() -> None:
    plain = pytest_invocation("python3 -m pytest -q tests/test_a.py tests/b.py::test_x")
    assert plain is not None and plain.targets == ("tests/test_a.py", "tests/b.py::test_x")
    assert plain.group_key() == (("python3", "-m", "pytest"), ("-q",))
    assert pytest_invocation("pytest -k 'fast and not slow' tests") is not None
    assert pytest_invocation("pytest -k fast tests").targets == ("tests",)  # type: ignore[union-attr]
    for not_plain in ("pytest tests; true", "cd x && pytest", "pytest $DIR", "pytest tests/*.py", "make test",
                      "python3 -c 'import pytest'", "pytest tests > out.txt"):
        assert pytest_invocation(not_plain) is None, not_plain
    unknown = pytest_invocation("pytest --some-plugin-option value tests/a.py")
    assert unknown is not None and unknown.group_key() is None  # runs alone: `value` may not be a path


def test_batches_split_for_the_pool_and_never_exceed_the_batch_size() -> None:
    commands = [f"pytest -q tests/test_{i}.py" for i in range(120)] + ["pytest -x tests/t.py", "make check"]
    batches, alone = plan_batches(commands, concurrency=2)
    assert sorted(len(batch.members) for batch in batches) == [40, 40, 40]
    assert sorted(alone) == ["make check", "pytest -x tests/t.py"]  # a group of one runs alone
    # Files by their directory: pytest walks a directory again for each file named in it.
    assert batches[0].command() == "pytest -q --continue-on-collection-errors tests"
    assert len(json.loads(batches[0].wanted(Path("/p")))) == 40 and "/p/tests/test_0.py" in batches[0].wanted(Path("/p"))


