"""Issue 29, item 4: a merge conflict under `--jobs N` costs a focused step, not a whole attempt."""

from __future__ import annotations

from orchestrator.merge.conflict_step import parse_hunks, resolved_text

CONFLICTED = "head\n<<<<<<< HEAD\nline 1\n=======\nline 2\n>>>>>>> abc (orchestrate work: feat-02)\nmiddle\n" \
             "<<<<<<< HEAD\nx\n=======\n>>>>>>> abc\ntail\n"


def test_both_sides_of_each_hunk_are_read_and_the_answers_replace_them() -> None:
    hunks = parse_hunks("shared.txt", CONFLICTED)
    assert hunks is not None
    assert [(h.index, h.branch, h.feature) for h in hunks] == [(0, "line 1\n", "line 2\n"), (1, "x\n", "")]
    assert resolved_text(CONFLICTED, ["line 1\nline 2", ""]) == "head\nline 1\nline 2\nmiddle\ntail\n"
    assert parse_hunks("a", "no markers\n") is None
    assert parse_hunks("a", "<<<<<<< HEAD\nunclosed\n") is None


