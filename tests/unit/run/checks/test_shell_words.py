"""The one tokenizer of check commands: what `check_paths` and `influence_snapshot` read a check by."""

from __future__ import annotations

import pytest

from orchestrator.run.checks.shell_words import is_operator, is_output_redirect, shell_words


@pytest.mark.parametrize(
    ("command", "words"),
    [
        ("cd tests&&pytest -q", ["cd", "tests", "&&", "pytest", "-q"]),
        ("(cd tests; pytest) > out.txt 2>&1", ["(", "cd", "tests", ";", "pytest", ")", ">", "out.txt", "2", ">&", "1"]),
        ("pytest 'tests/a b.py' -k \"x and y\"  # why", ["pytest", "tests/a b.py", "-k", "x and y"]),
        ("pytest 'tests/a;b.py'|tee log", ["pytest", "tests/a;b.py", "|", "tee", "log"]),
        ("pytest 'unbalanced tests&&make", ["pytest", "'unbalanced", "tests", "&&", "make"]),
        ("", []),
    ],
)
def test_a_command_splits_into_words_and_operators_as_the_shell_reads_it(command: str, words: list[str]) -> None:
    assert shell_words(command) == words


def test_operators_and_output_redirects_are_told_from_words() -> None:
    assert [token for token in shell_words("a && b | c > d >> e &> f < g") if is_operator(token)] == \
        ["&&", "|", ">", ">>", "&>", "<"]
    assert [is_output_redirect(token) for token in (">", ">>", "&>", ">&", "<", "&&", "x>y")] == \
        [True, True, True, True, False, False, False]
