"""Feature word-wrap: `textkit.wrap(text, width=70)` and `textkit.fill(text, width=70)`."""

import pytest

from textkit import fill, wrap

FOX = "The quick brown fox jumps over the lazy dog"


def test_greedy_lines():
    assert wrap(FOX, 10) == ["The quick", "brown fox", "jumps over", "the lazy", "dog"]


def test_width_is_inclusive():
    assert wrap("abc def", 7) == ["abc def"]
    assert wrap("abc def", 6) == ["abc", "def"]


def test_default_width_is_70():
    assert wrap(FOX) == [FOX]
    assert [len(line) for line in wrap("word " * 30)] == [69, 69, 9]


def test_whitespace_is_collapsed():
    assert wrap("  one \n\n two\tthree  ", 80) == ["one two three"]
    assert wrap("", 10) == []
    assert wrap(" \n\t ", 10) == []


def test_words_are_never_broken():
    assert wrap("a supercalifragilistic word", 10) == ["a", "supercalifragilistic", "word"]
    assert wrap("a well-known fact", 8) == ["a", "well-known", "fact"]


def test_bad_width():
    with pytest.raises(ValueError):
        wrap("text", 0)


def test_fill():
    assert fill(FOX, 10) == "The quick\nbrown fox\njumps over\nthe lazy\ndog"
    assert fill("", 10) == ""
